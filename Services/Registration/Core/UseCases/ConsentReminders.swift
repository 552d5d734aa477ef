import Foundation
import Logging
import StudyModels

/// Asks for and sends the reminders to sign a changed consent (docs/admin-api.md, Consent
/// changes): a study admin asks for one to everyone who owes a signature; the sweep decides each
/// once it is due, never in the participant's quiet hours (it waits for their end, in their zone),
/// and pushes it through the push queue to their devices unless they signed meanwhile, left, or
/// take no notifications.
package struct ConsentReminders: Sendable {
    package let store: ConsentReminderStore
    package let studies: any StudySchedules
    package let logger: Logger

    package init(store: ConsentReminderStore, studies: any StudySchedules, logger: Logger) {
        self.store = store
        self.studies = studies
        self.logger = logger
    }

    /// Reminders decided per round.
    package static let batch = 100
    /// How long a claimed reminder is kept from the other replicas while it is decided.
    package static let lease: Duration = .seconds(120)
    /// The push's text when the request gives none.
    package static let defaultMessage = "The consent for this study has changed. Please open the app to review and sign it."

    /// A request's checked parts, or the reason it is refused.
    package static func checked(_ request: ConsentReminderRequest) throws(RegistrationAdminError)
        -> (quietFrom: String, quietUntil: String, message: String)
    {
        let from = request.quietFrom ?? (request.quietUntil == nil ? ConsentReminderRequest.defaultQuietHours.from : nil)
        let until = request.quietUntil ?? (request.quietFrom == nil ? ConsentReminderRequest.defaultQuietHours.until : nil)
        guard let from, let until else { throw .invalidReminder("quiet hours need both a start (quietFrom) and an end (quietUntil)") }
        for (name, value) in [("quietFrom", from), ("quietUntil", until)] where LocalTimes.time(value) == nil {
            throw .invalidReminder("\(name) must be a time of day as HH:mm, for example 21:00")
        }
        guard !from.unicodeScalars.elementsEqual(until.unicodeScalars) else {
            throw .invalidReminder("quiet hours must end at another time than they start")
        }
        var message = defaultMessage
        if let given = request.message {
            guard let line = TextRules.singleLineField(given, maximum: ConsentReminderRequest.maxMessageLength) else {
                throw .invalidReminder(
                    "the message is one line of at most \(ConsentReminderRequest.maxMessageLength) characters (a push shows a line or two); leave it out for the standard one")
            }
            message = line
        }
        return (from, until, message)
    }

    /// Adds a reminder for everyone of the published study `studyId` who owes a signature; the
    /// summary says how many. Throws `noPublishedStudy`, `consentVersionsUnavailable`, or
    /// `invalidReminder`.
    package func request(_ request: ConsentReminderRequest, studyId: String, by actor: String) async throws -> ConsentReminderSummary {
        let (from, until, message) = try Self.checked(request)
        let standing = try await standing(of: studyId)
        let added = try await store.request(.init(
            studyId: studyId, consentVersionsInForce: standing.consentVersionsInForce, quietFrom: from, quietUntil: until,
            title: standing.name ?? studyId, body: message, requestedBy: actor))
        var summary = try await store.summary(studyId: studyId, consentVersionsInForce: standing.consentVersionsInForce)
        summary.requested = added
        return summary
    }

    /// Where the study's reminders stand.
    package func summary(studyId: String) async throws -> ConsentReminderSummary {
        try await summary(studyId: studyId, standing: try await standing(of: studyId))
    }

    /// Where the study's reminders stand, given its standing as study-metadata told it (nil: no
    /// published study, refused as `noPublishedStudy`).
    package func summary(studyId: String, standing: StudyStanding?) async throws -> ConsentReminderSummary {
        guard let standing else { throw RegistrationAdminError.noPublishedStudy(studyId) }
        return try await store.summary(studyId: studyId, consentVersionsInForce: standing.consentVersionsInForce)
    }

    private func standing(of studyId: String) async throws -> StudyStanding {
        let found: StudyStanding?
        do { found = try await studies.standing(of: studyId, logger: logger) } catch is StudyDirectory.Unavailable {
            throw RegistrationAdminError.consentVersionsUnavailable
        }
        guard let found else { throw RegistrationAdminError.noPublishedStudy(studyId) }
        return found
    }

    /// One round: decides up to `batch` due reminders; how many it took.
    package func round(now: @Sendable () -> Date = Date.init) async throws -> Int {
        let due = try await store.claim(limit: Self.batch, lease: Self.lease)
        var schedules = RoundSchedules(studies: studies, logger: logger)
        for item in due {
            var zone = item.timeZone.flatMap(TimeZone.init(identifier:))
            if zone == nil {
                // Never counted yet: the study's zone, once study-metadata says it.
                switch try await schedules.lookup(item.studyId) {
                case .published(let schedule): zone = TimeZone(identifier: schedule.timeZone)
                case .notPublished: break
                case .unreachable: continue
                }
            }
            let at = now()
            switch ReminderPlan.quietEnd(at, from: item.quietFrom, until: item.quietUntil, zone: zone ?? .gmt) {
            case .some(.some(let end)):
                try await store.postpone(item, until: end)
                continue
            case .some(nil), nil: break
            }
            let outcome = try await store.decide(item) { appId, orgId in
                NotificationMessage(
                    id: item.id, notificationId: "consent-reminder-\(item.id)", appId: appId, orgId: orgId, studyId: item.studyId,
                    type: .study, subtype: "Study", title: LocalizedText(item.title),
                    message: LocalizedText(item.body), activityId: nil, resourceId: nil, sentAt: at)
            }
            if let outcome {
                logger.debug("a consent reminder was decided", metadata: ["outcome": "\(outcome.rawValue)"])
            }
        }
        return due.count
    }
}
