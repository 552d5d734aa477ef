import Crypto
import Foundation
import JSONText
import ServiceKit
import StudyModels

/// One page of the study builder: a part of the study document edited on its own, as the
/// original portal had a page per section. Saving a section reads the whole draft, puts the
/// section's fields into it, and saves the whole draft back; the admin API validates all of it.
package struct StudySection: Sendable {
    /// The page's URL segment: `/studies/{studyId}/{slug}`.
    package var slug: String
    package var title: String
    /// What the section is for, shown above the fields.
    package var intro: String
    package var elements: [FormElement]
    /// The part of the document the page edits (an activity: `/activities/2`); the elements'
    /// pointers start there.
    package var root: JSONPointer
    /// A page named by a member of what it edits (a step by its key), whose name follows that
    /// member when a save changes it.
    package var namedBy: NamedBy?
    /// The activity an activity's or a step's page belongs to.
    package var activityId: String?

    package struct NamedBy: Sendable {
        /// The pages' folder under the study, escaped for a URL (`activities/daily/steps/`).
        package var folder: String
        /// The member that names the page, from `root`.
        package var member: JSONPointer

        package init(folder: String, member: JSONPointer) {
            self.folder = folder
            self.member = member
        }
    }

    package init(
        slug: String, title: String, intro: String, root: JSONPointer = JSONPointer(tokens: []), namedBy: NamedBy? = nil,
        activityId: String? = nil, elements: [FormElement]
    ) {
        self.activityId = activityId
        self.slug = slug
        self.title = title
        self.intro = intro
        self.root = root
        self.namedBy = namedBy
        self.elements = elements
    }

    /// The page's path under the study once `document` is saved (a renamed step's new page).
    package func path(after document: JSONValue) -> String {
        guard let namedBy, case .string(let name) = document[pointer: JSONPointer(tokens: root.tokens + namedBy.member.tokens)],
            !name.isEmpty
        else { return slug }
        return namedBy.folder + AdminAPIClient.segment(name)
    }

    /// A section of fields only.
    package init(slug: String, title: String, intro: String, fields: [FormField]) {
        self.init(slug: slug, title: title, intro: intro, elements: fields.map { .field($0) })
    }

    /// The form values the document holds for this section.
    package func values(in document: JSONValue) -> FormFields {
        let item = document[pointer: root] ?? .object([:])
        return FormFields(elements.flatMap { $0.values(in: item, at: root) })
    }

    /// The field a problem lies in, and its input's name, with the rows as `form` has them.
    package func field(holding pointer: JSONPointer, form: FormFields) -> (FormField, name: String)? {
        for element in elements {
            if let found = element.field(holding: pointer, at: root, form: form) { return found }
        }
        return nil
    }

    /// The page after a row was added, removed or moved: an added row starts with what the
    /// list's new item holds (a checkbox that defaults to checked is checked). Nil when the edit
    /// cannot be made.
    package func editing(_ form: FormFields, _ edit: FormEdit) -> FormFields? {
        guard var edited = edit.applied(to: form) else { return nil }
        if case .add(let name) = edit {
            guard let list = elements.lazy.compactMap({ $0.list(named: name, at: root, form: form) }).first,
                let count = FormEdit.count(of: name, in: edited), count >= 1, let pointer = JSONPointer(name)
            else { return nil }
            let row = pointer.appending(count - 1)
            for element in list.elements {
                for pair in element.values(in: list.newItem, at: row) { edited.append(pair.name, pair.value) }
            }
        }
        return edited
    }

    /// `form` with what a table's saved rows hold in `document` (a form carries only their
    /// places, since they are changed on their own pages), so a page drawn again from a form
    /// still shows them.
    package func completingSavedRows(_ form: FormFields, from document: JSONValue) -> FormFields {
        var completed = form
        let item = document[pointer: root] ?? .object([:])
        for case .list(let list) in elements where list.table {
            let name = list.name(at: root)
            guard let count = FormEdit.count(of: name, in: form), case .array(let originals) = item[pointer: list.pointer] else {
                continue
            }
            for index in 0..<count {
                let row = root.appending(list.pointer).appending(index)
                guard let from = form[row.description + "#from"].flatMap({ WholeNumber.parse($0, in: 0...FormList.maxRows) }), originals.indices.contains(from) else { continue }
                for element in list.elements {
                    for pair in element.values(in: originals[from], at: row) where completed[pair.name] == nil {
                        completed.append(pair.name, pair.value)
                    }
                }
            }
        }
        return completed
    }

    /// What the template draws.
    /// `draft`: what reference fields choose from (a branch's target steps, an anchor's activity).
    package func views(values: FormFields, problems: [ValidationProblem], spanish: Bool, readOnly: Bool, draft: JSONValue? = nil) -> [ElementView] {
        let references = draft.map(FormReferences.init(draft:)) ?? .none
        return elements.map {
            ElementView.make($0, at: root, values: values, problems: problems, spanish: spanish, readOnly: readOnly, references: references)
        }
    }

    /// A digest of what the document holds for this section. A page carries it from when it was
    /// drawn; a save whose section changed meanwhile (someone else saved it) is stopped, so
    /// nobody overwrites a colleague's change without seeing it.
    package func fingerprint(of document: JSONValue) -> String {
        fingerprint(of: values(in: document))
    }

    /// The fingerprint of the section whose values (as `values(in:)` reads them) are `values`.
    package func fingerprint(of values: FormFields) -> String {
        var digest = SHA256()
        for (name, value) in values.pairs {
            digest.update(data: Data(name.utf8))
            digest.update(data: [0])
            digest.update(data: Data(value.utf8))
            digest.update(data: [1])
        }
        return digest.finalize().hexString
    }

    /// The document with this section's fields as `form` says.
    package func applying(_ form: FormFields, to document: JSONValue) throws(JSONValue.PointerError) -> JSONValue {
        var document = document
        var form = form
        form.timeZone = document["timeZone"]?.string.flatMap(TimeZone.init(identifier:))
        var item = document[pointer: root] ?? .object([:])
        for element in elements { try element.apply(form, at: root, to: &item) }
        try document.set(item, at: root)
        return document
    }
}

