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
        var email: String
        var status: String
        var site: String
        var enrolledAt: String
        var consent: String
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
            status = archive.status ?? "deleted"
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
