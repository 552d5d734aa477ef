import Foundation
import ServiceKit
import StudyModels

/// A study admin's message to the participants of an active study, sent at once (the study
/// document's notifications are for what is planned), and the study's notifications listed.
package struct StudyMessages: Sendable {
    package let studies: any StudySummaries
    package let notifications: any NotificationOutbox

    package init(studies: any StudySummaries, notifications: any NotificationOutbox) {
        self.studies = studies
        self.notifications = notifications
    }

    /// The longest text a message may have: a push shows far less, and the app lists the rest.
    package static let maximumText = 1_000
    package static let maximumTitle = 100

    /// Queues `message` for the study's participants now. Refusals: a bad message (422), no such
    /// study (404), a study that is not active or an id the study has used (409).
    package func send(_ message: StudyMessage, studyId: String, by actor: String) async throws -> NotificationStore.Record {
        var problems: [ValidationProblem] = []
        let notificationId = message.notificationId ?? "message-\(UUID().uuidString.prefix(8).lowercased())"
        if !Identifiers.isValid(notificationId) {
            problems.append(.init(pointer: "/notificationId", message: Identifiers.rule))
        }
        let english = (message.text.translations[LocalizedText.defaultLanguage] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if english.isEmpty {
            problems.append(.init(pointer: "/text", message: "needs an English (\"en\") text"))
        }
        for (language, text) in message.text.translations.sorted(by: { $0.key < $1.key }) where text.unicodeScalars.count > Self.maximumText {
            problems.append(.init(pointer: "/text/\(language)", message: "is longer than \(Self.maximumText) characters"))
        }
        for (language, text) in (message.title?.translations ?? [:]).sorted(by: { $0.key < $1.key })
        where text.unicodeScalars.count > Self.maximumTitle {
            problems.append(.init(pointer: "/title/\(language)", message: "is longer than \(Self.maximumTitle) characters"))
        }
        guard problems.isEmpty else { throw StudyMetadataError.invalid(problems, subject: .studyMessage) }
        guard let study = try await studies.summary(studyId: studyId) else { throw StudyMetadataError.noStudy(studyId) }
        guard [.active, .testing].contains(study.status) else { throw StudyMetadataError.notActive(studyId: study.studyId, status: study.status) }
        guard let record = try await notifications.sendStudyMessage(
            studyId: study.studyId, appId: study.appId, notificationId: notificationId, title: message.title,
            message: message.text, by: actor)
        else { throw StudyMetadataError.studyNotificationExists(studyId: study.studyId, notificationId: notificationId) }
        return record
    }

    /// The study's notifications, newest first.
    package func list(studyId: String) async throws -> [NotificationStore.Record] {
        guard try await studies.exists(studyId: studyId) else { throw StudyMetadataError.noStudy(studyId) }
        return try await notifications.list(studyId: studyId)
    }
}
