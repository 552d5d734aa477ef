import ConsoleCore
import Foundation
import JSONText
import StudyModels

/// How the study pages show studies, roles and problems (values for the templates).
enum StudyPageModels {
    static func study(_ summary: StudySummary, role: StudyRole?) -> [String: Any] {
        [
            "studyId": summary.studyId, "appId": summary.appId, "name": summary.name,
            "statusLabel": statusLabel(summary.status), "statusClass": summary.status.rawValue,
            "testing": summary.status == .testing,
            "roleLabel": roleLabel(role), "updatedAt": timestamp(summary.draftUpdatedAt), "updatedBy": summary.draftUpdatedBy,
        ]
    }

    static func statusLabel(_ status: StudyStatus) -> String {
        switch status {
        case .preLaunch: "Draft (not published)"
        case .upcoming: "Upcoming"
        case .testing: "In testing"
        case .active: "Active"
        case .paused: "Paused"
        case .deactivated: "Closed"
        }
    }

    static func roleLabel(_ role: StudyRole?) -> String {
        switch role {
        case .studyAdmin: "study admin"
        case .editor: "editor"
        case .viewer: "viewer"
        case nil: "none"
        }
    }

    /// A size for people: bytes, KB or MB (of 1,024).
    static func byteSize(_ bytes: Int) -> String {
        switch bytes {
        case ..<1_024: "\(bytes) bytes"
        case ..<(1_024 * 1_024): "\((bytes + 1_023) / 1_024) KB"
        default: String(format: "%.1f MB", Double(bytes) / 1_048_576)
        }
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon))
            .replacingOccurrences(of: "T", with: " ") + " UTC"
    }

    /// The builder's menu, with the current page marked.
    static func sections(_ sections: [StudySection], current: String?) -> [[String: Any]] {
        sections.map { section in
            let isCurrent = current == section.slug || (current?.hasPrefix(section.slug + "/") ?? false)
            return ["slug": section.slug, "title": section.title, "intro": section.intro, "current": isCurrent]
        }
    }

    /// A problem for the template; a problem about the whole document has no pointer to show
    /// (an empty string would still open a Mustache section).
    static func item(_ problem: ValidationProblem) -> [String: Any] {
        problem.pointer.isEmpty ? ["message": problem.message] : ["message": problem.message, "pointer": problem.pointer]
    }

    /// Each problem with a link to the field it concerns: on this page (`#id`), whose rows are
    /// as `values` has them, or on the page that has it (rows as in `draft`): a section, an
    /// activity's page or a step's.
    static func problems(
        _ problems: [ValidationProblem], page: StudySection?, values: FormFields, sections: [StudySection], draft: JSONValue,
        studyId: String
    ) -> [[String: Any]] {
        problems.map { problem in
            var item = item(problem)
            guard let pointer = JSONPointer(problem.pointer), !pointer.tokens.isEmpty else { return item }
            if let page, let (field, name) = page.field(holding: pointer, form: values) {
                item["href"] = "#\(FieldView.elementID(JSONPointer(name)!))-field"
                item["label"] = field.label
                return item
            }
            // An activity's or a step's own page first: it is where the field is whole.
            let candidates = [StudySection.activityPage(holding: pointer, in: draft)].compactMap { $0 } + sections
            for section in candidates where section.slug != page?.slug {
                if let (field, name) = section.field(holding: pointer, form: section.values(in: draft)) {
                    item["href"] = "/studies/\(studyId)/\(section.slug)#\(FieldView.elementID(JSONPointer(name)!))-field"
                    item["label"] = "\(section.title): \(field.label)"
                    break
                }
            }
            return item
        }
    }
}
