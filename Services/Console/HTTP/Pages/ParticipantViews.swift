import ConsoleCore
import StudyModels

/// `participants.mustache`: a page of the study's participants, filtered and sorted, and the
/// adherence per activity.
struct ParticipantsView: PageView {
    static let template = "participants"

    struct Row {
        var participantId: String
        /// "Participant N", as the data and exports name them.
        var label: String
        /// Their page, at their number (`ParticipantAddress`).
        var href: String
        var email: String
        var status: String
        var site: String
        var enrolledAt: String
        var consent: String
        /// In the study with no signature of the consent in force.
        var owesConsent: Bool
        var lastActivityAt: String
        var completion: Int
        var adherence: Int
    }

    /// A sortable column's heading: the link to its order, and whether it is the current one.
    struct SortHeading {
        var href: String
        var ariaSort: String
    }

    struct SortHeadings {
        var status: SortHeading
        var enrolledAt: SortHeading
        var lastActivityAt: SortHeading
    }

    struct Site {
        var siteId: String
        var name: String
        var selected: Bool
    }

    struct Adherence {
        var activityId: String
        var upToDate: Int
        var behind: Int
        var notStarted: Int
    }

    /// The response service could not say the participants' numbers.
    var numbersUnavailable: Bool
    /// A number was searched for while the response service could not say whose it is: it was
    /// searched for as text.
    var numberSearchFailed: Bool
    var participants: [Row]
    var hasParticipants: Bool
    /// E-mail addresses are shown (study admins).
    var identities: Bool
    var nextHref: String?
    var sort: SortHeadings
    var statuses: [OptionChoice]
    var sites: [Site]
    var search: String
    var adherence: [Adherence]
    var hasAdherence: Bool
    /// How many participants the adherence counts are of.
    var inStudy: Int
    /// Only those who owe a signature are listed.
    var owingFilter: Bool
    var consent: ConsentSection
}

/// The participants page's consent part: who owes a signature of the consent in force, the
/// reminders (a study admin sends them), and the consent history to download.
struct ConsentSection {
    /// Registration answered; otherwise the section says it cannot tell.
    var known: Bool
    /// "1.1" or "1.1 or 1.2": the versions a signature satisfies; empty when any does.
    var inForce: String
    var reconsentAsked: Bool
    var owing: Int
    var owingText: String
    var waiting: Int
    var hasWaiting: Bool
    var hasOwing: Bool
    var outcomes: [String]
    var hasOutcomes: Bool
    var lastRequest: String?
    var mayRemind: Bool
    var showForm: Bool
    var quietFrom = ConsentReminderRequest.defaultQuietHours.from
    var quietUntil = ConsentReminderRequest.defaultQuietHours.until
    var done: String?
    var problem: String?
    var historyHref: String

    init(_ summary: ConsentReminderSummary?, mayRemind: Bool, done: String?, problem: String?, historyHref: String) {
        known = summary != nil
        let versions = summary?.consentVersionsInForce ?? []
        inForce = versions.joined(separator: " or ")
        reconsentAsked = !versions.isEmpty
        owing = summary?.owing ?? 0
        owingText = owing == 1 ? "1 participant owes" : "\(owing) participants owe"
        waiting = summary?.waiting ?? 0
        hasWaiting = waiting > 0
        hasOwing = owing > 0
        let words = [
            ("queued", "queued for their phones"), ("opted_out", "not sent: notifications are off in their app"),
            ("no_device", "not sent: no phone of theirs takes notifications"), ("signed", "not sent: they signed meanwhile"),
            ("left", "not sent: they left the study"),
        ]
        outcomes = words.compactMap { key, text in
            summary?.outcomes[key].flatMap { $0 > 0 ? "\($0) \(text)" : nil }
        }
        hasOutcomes = !outcomes.isEmpty || waiting > 0
        lastRequest = summary.flatMap { summary in
            summary.lastRequestedAt.map { "Last asked for by \(summary.lastRequestedBy ?? "someone") on \(StudyPageModels.timestamp($0))." }
        }
        self.mayRemind = mayRemind
        showForm = mayRemind && owing > 0
        self.done = done
        self.problem = problem
        self.historyHref = historyHref
    }

    static func reminded(_ count: Int) -> String {
        count == 0
            ? "No new reminder: everyone who owes a signature has one waiting already."
            : "\(count == 1 ? "1 reminder" : "\(count) reminders") will be sent, each outside the participant's quiet hours."
    }

    /// Registration's refusal in a coordinator's words: the field names it uses become the form's.
    static func refusal(_ message: String) -> String {
        "The reminders were not sent: "
            + message.replacingOccurrences(of: " (quietFrom)", with: "").replacingOccurrences(of: " (quietUntil)", with: "")
            .replacingOccurrences(of: "quietFrom", with: "“Quiet from”").replacingOccurrences(of: "quietUntil", with: "“Quiet until”")
            + "."
    }
}

/// `participant.mustache`: one participant, their consents, activities, responses and Sage
/// archives.
struct ParticipantView: PageView {
    static let template = "participant"

    struct Participant {
        var label: String
        var participantId: String
        var email: String
        var hasEmail: Bool
        var status: String
        var site: String
        var enrolledAt: String
        var withdrawnAt: String
        var hasWithdrawn: Bool
        var sharing: String
        var completion: Int
        var adherence: Int
        var verified: String
        var locked: String
        var disabled: String
    }

    struct Consent {
        var consentId: String
        var version: String
        var status: String
        var sharing: String
        var recordedAt: String
        var hasPDF: Bool
        var pdfBytes: String
        /// The start of the PDF's SHA-256.
        var sha: String
        /// The admin may read the PDF.
        var download: Bool
    }

    struct Activity {
        var activityId: String
        var version: String
        var state: String
        var runId: String
        var runs: String
        var missed: Int
        var updatedAt: String
    }

    struct ResponseRow {
        var id: String
        var activityId: String
        var version: String
        var status: String
        var error: String
        var receivedAt: String
        /// The response's rows in the data grid.
        var rowsHref: String
    }

    /// A result archive a Sage app sent, with its files.
    struct Archive {
        struct File {
            var name: String
            var size: String
            /// Not a file the assessment's result format names.
            var unexpected: Bool
            var href: String
        }

        var archiveId: String
        var shortId: String
        var assessmentId: String
        var version: String
        var receivedAt: String
        var size: String
        var sealed: Bool
        var status: String
        var error: String
        var hasError: Bool
        var href: String
        var files: [File]

        init(_ archive: SageArchiveSummary, studyId: String) {
            href = "/studies/\(AdminAPIClient.segment(studyId))/sage-archives/\(AdminAPIClient.segment(archive.archiveId))"
            archiveId = archive.archiveId
            shortId = String(archive.archiveId.prefix(8))
            assessmentId = archive.assessmentId
            version = archive.activityVersion
            receivedAt = StudyPageModels.timestamp(archive.receivedAt)
            size = StudyPageModels.byteSize(archive.bytes)
            sealed = archive.sealed
            status = StatusNames.response(archive.status ?? "deleted")
            error = archive.error ?? ""
            hasError = !(archive.error ?? "").isEmpty
            let href = href
            files = archive.files.map { file in
                File(
                    name: file.name, size: StudyPageModels.byteSize(file.bytes), unexpected: file.unexpected,
                    href: href + "/file" + AdminAPIClient.queryString([("name", file.name)]))
            }
        }
    }

    var participant: Participant
    var consents: [Consent]
    var hasConsents: Bool
    var activities: [Activity]
    var hasActivities: Bool
    /// Registration knows the hash that finds their responses.
    var responsesLinked: Bool
    var responsesUnavailable = false
    var responses: [ResponseRow] = []
    var hasResponses = false
    /// Their participant number at the response service.
    var responseParticipant = ""
    var sageArchives: [Archive] = []
    var hasSageArchives = false
    /// Their runs from registration (`RunTimeline`); nil before they enrolled.
    var runs: RunTimeline?
    var hasRuns = false
    /// Registration could not say (a peer of its did not answer); the page stands without.
    var runsUnavailable = false
    var runsMessage = ""
    /// Their weekly report from the server's kept counts, newest week first.
    var weeks: [WeekRow] = []
    var hasWeeks = false

    /// A week of the weekly report: per activity, runs completed of those that opened.
    struct WeekRow {
        struct Cell {
            var activityId: String
            var text: String
        }

        var week: String
        var cells: [Cell]
        var adherence: String
    }
}
