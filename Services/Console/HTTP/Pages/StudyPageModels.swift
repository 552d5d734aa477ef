import ConsoleCore
import Foundation
import JSONText
import StudyModels

/// A study as the studies list and every study page's menu show it.
struct StudyHeader: Hashable {
    var studyId: String
    var appId: String
    var name: String
    var statusLabel: String
    var statusClass: String
    var testing: Bool
    var roleLabel: String
    var updatedAt: String
    var updatedBy: String

    init(_ summary: StudySummary, role: StudyRole?) {
        studyId = summary.studyId
        appId = summary.appId
        name = summary.name
        statusLabel = StudyPageModels.statusLabel(summary.status)
        statusClass = summary.status.rawValue
        testing = summary.status == .testing
        roleLabel = StudyPageModels.roleLabel(role)
        updatedAt = StudyPageModels.timestamp(summary.draftUpdatedAt)
        updatedBy = summary.draftUpdatedBy
    }
}

/// What every study page's menu (`study-nav.mustache`) reads: the study, the builder's
/// sections and which page is open.
struct StudyMenu: Hashable {
    struct SectionLink: Hashable {
        var slug: String
        var title: String
        var current: Bool
    }

    var study: StudyHeader
    var sections: [SectionLink]
    var overviewCurrent: Bool
    var actionsCurrent: Bool
    var teamCurrent: Bool
    var tokensCurrent: Bool
    var messagesCurrent: Bool
    var filesCurrent: Bool
    var schemaCurrent: Bool
    var participantsCurrent: Bool
    var invitationsCurrent: Bool
    var dataCurrent: Bool
    var processingCurrent: Bool
    var fhirClientsCurrent: Bool
    var chartsCurrent: Bool
    var adherenceCurrent: Bool
    var auditCurrent: Bool
    var documentCurrent: Bool

    /// `current`: the open page's path under the study (a section's slug, `actions`, ...), nil
    /// for the study's summary.
    init(summary: StudySummary, role: StudyRole?, sections: [StudySection], current: String?) {
        study = StudyHeader(summary, role: role)
        self.sections = sections.map { section in
            SectionLink(
                slug: section.slug, title: section.title,
                current: current == section.slug || (current?.hasPrefix(section.slug + "/") ?? false))
        }
        overviewCurrent = current == nil
        actionsCurrent = current == "actions"
        teamCurrent = current == "team"
        tokensCurrent = current == "tokens"
        messagesCurrent = current == "messages"
        filesCurrent = current == "files"
        schemaCurrent = current == "schema"
        participantsCurrent = current == "participants"
        invitationsCurrent = current == "invitations"
        dataCurrent = current == "data"
        processingCurrent = current == "processing"
        fhirClientsCurrent = current == "fhir-clients"
        chartsCurrent = current == "charts"
        adherenceCurrent = current == "adherence"
        auditCurrent = current == "audit"
        documentCurrent = current == "document"
    }
}

/// An option of a page's select (a filter's status, a forwarding type): its value, its words,
/// and whether it is the one chosen.
struct OptionChoice {
    var value: String
    var label: String
    var selected: Bool
}

/// A problem as a page lists it: its words, and the field it concerns when the page can link
/// to it (a coordinator is shown the field, never the JSON pointer the admin API located it by).
struct ProblemItem {
    var message: String
    var href: String?
    var label: String?

    init(_ problem: ValidationProblem) {
        message = problem.message
    }

    /// A problem of a file the admin gave (a protocol, a design, an export), at its place in the
    /// file said as its members' names: `properties › study_id: must be ...`.
    init(inFile problem: ValidationProblem) {
        let place = JSONPointer(problem.pointer)?.tokens ?? []
        message = place.isEmpty ? problem.message : "\(place.joined(separator: " › ")): \(problem.message)"
    }
}

/// What `problems.mustache` reads: nil when there is nothing to report.
struct ProblemReport {
    var heading: String
    var problems: [ProblemItem]

    /// nil for no problems.
    init?(heading: String, _ problems: [ProblemItem]) {
        guard !problems.isEmpty else { return nil }
        self.heading = heading
        self.problems = problems
    }

    init?(heading: String, _ problems: [ValidationProblem]) {
        self.init(heading: heading, problems.map { ProblemItem($0) })
    }

    /// Headed "`outcome`: N things to fix".
    init?(_ outcome: String, toFix problems: [ProblemItem]) {
        self.init(heading: "\(outcome): \(problems.count == 1 ? "1 thing" : "\(problems.count) things") to fix", problems)
    }
}

/// How the study pages show studies, roles and problems.
enum StudyPageModels {

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
        date.formatted(timestampStyle).replacingOccurrences(of: "T", with: " ") + " UTC"
    }

    /// (Made once: every study page's header shows a time.)
    static let timestampStyle = Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateSeparator(.dash)
        .time(includingFractionalSeconds: false).timeSeparator(.colon)

    /// Each problem with a link to the field it concerns: on this page (`#id`), whose rows are
    /// as `values` has them, or on the page that has it (rows as in `draft`): a section, an
    /// activity's page or a step's.
    static func problems(
        _ problems: [ValidationProblem], page: StudySection?, values: FormFields, sections: [StudySection], draft: JSONValue,
        studyId: String
    ) -> [ProblemItem] {
        problems.map { problem in
            var item = ProblemItem(problem)
            guard let pointer = JSONPointer(problem.pointer), !pointer.tokens.isEmpty else { return item }
            if let page, let (field, name) = page.field(holding: pointer, form: values), let target = JSONPointer(name) {
                item.href = "#\(FieldView.elementID(target))-field"
                item.label = field.label
                return item
            }
            // An activity's or a step's own page first: it is where the field is whole.
            let candidates = [StudySection.activityPage(holding: pointer, in: draft)].compactMap { $0 } + sections
            for section in candidates where section.slug != page?.slug {
                if let (field, name) = section.field(holding: pointer, form: section.values(in: draft)), let target = JSONPointer(name) {
                    item.href = "/studies/\(studyId)/\(section.slug)#\(FieldView.elementID(target))-field"
                    item.label = "\(section.title): \(field.label)"
                    break
                }
            }
            return item
        }
    }
}
