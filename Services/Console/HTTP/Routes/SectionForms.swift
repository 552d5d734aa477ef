import ConsoleCore
import JSONText
import ServiceKit
import StudyModels

/// A section page's form as drawn: its HTML, the values it shows (a table's saved rows completed
/// from the draft: what its problems are found in), and the kinds of upload its fields suggest.
struct SectionForm: Sendable {
    var html: SafeHTML
    var values: FormFields
    var uploads: Set<FormField.Uploads>

    /// The form of `section` showing `values` (the draft's, or a submitted form's) with `problems`.
    init(_ section: StudySection, values: FormFields, problems: [ValidationProblem], state: StudyPageState) {
        let values = section.completingSavedRows(values, from: state.draft)
        self.values = values
        uploads = section.elements.reduce(into: []) { $0.formUnion($1.suggestedUploads(in: values, at: section.root)) }
        html = FormHTML.render(
            section.views(values: values, problems: problems, spanish: state.spanish, readOnly: !state.editable, draft: state.draft),
            studyId: state.summary.studyId, timeZone: state.draft["timeZone"]?.string)
    }

    /// About how many bytes it holds, for the cache's limit.
    var bytes: Int {
        values.pairs.reduce(html.renderText.utf8.count) { $0 + $1.name.utf8.count + $1.value.utf8.count + 32 }
    }
}

/// A section's form as the draft holds it, and the section's fingerprint: what a section page
/// opened without a submitted form draws.
struct SavedSectionForm: Sendable {
    var form: SectionForm
    var base: String
}

/// The saved forms drawn last: a page opened again at the same draft version (the version its
/// summary names, read with the admin's token on every request) draws the same form, so it is
/// drawn once per version. What else the form depends on is in the key (the study, the section,
/// whether it is read-only) or the version (the apps a study's basics choose from).
typealias SectionFormCache = VersionedCache<String, SavedSectionForm>

extension SectionFormCache {
    /// Room for 512 forms, 32 MiB of them.
    convenience init() {
        self.init(maxEntries: 512, maxBytes: 32 * 1024 * 1024)
    }
}

extension ConsolePages {
    /// `section`'s form showing what the draft holds, drawn once per draft version.
    func savedForm(_ section: StudySection, state: StudyPageState) -> SavedSectionForm {
        let draw = {
            let values = section.values(in: state.draft)
            return SavedSectionForm(form: SectionForm(section, values: values, problems: [], state: state), base: section.fingerprint(of: values))
        }
        guard let version = state.version else { return draw() }
        let key = lengthPrefixed([state.summary.studyId, section.slug, section.root.description, state.editable ? "editable" : "read-only"])
        if let kept = sectionForms.value(key, version: version) { return kept }
        let drawn = draw()
        sectionForms.keep(drawn, under: key, version: version, bytes: drawn.form.bytes + drawn.base.utf8.count)
        return drawn
    }
}
