import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// Golden JSON: what every app endpoint returns at each step of a study's life (launched, updated
/// twice, paused, resumed), compared with files under `Tests/ServicesTests/Golden/<step>/`.
/// Instants within a few days of now (launch and publication times, send dates) read `<recent>`,
/// and generated notification ids `<action>-<id>`; everything else must match exactly.
///
/// After an intended change, re-record with `STUDYSTACK_RECORD_GOLDEN=1 scripts/test.sh --filter
/// AppAPIGoldenTests` and review the diff.
@Suite(.needsCluster) struct AppAPIGoldenTests {
    let helper = MetadataAdmin()
    let notifications = NotificationFixture()

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let recording = ProcessInfo.processInfo.environment["STUDYSTACK_RECORD_GOLDEN"] == "1"

    /// Every app endpoint, with the parameters the apps send.
    static let endpoints: [(name: String, uri: String)] = [
        ("versionInfo", "/StudyMetaData/versionInfo"),
        ("appUpdates", "/StudyMetaData/appUpdates?appVersion=1.9&os=ios"),
        ("termsPolicy", "/StudyMetaData/termsPolicy"),
        ("gatewayInfo", "/StudyMetaData/gatewayInfo"),
        ("studyList", "/StudyMetaData/studyList"),
        ("study", "/StudyMetaData/study?studyId=SLEEPWELL"),
        ("studyInfo", "/StudyMetaData/studyInfo?studyId=SLEEPWELL"),
        ("eligibilityConsent", "/StudyMetaData/eligibilityConsent?studyId=SLEEPWELL"),
        ("consentDocument", "/StudyMetaData/consentDocument?studyId=SLEEPWELL&consentVersion="),
        ("resources", "/StudyMetaData/resources?studyId=SLEEPWELL"),
        ("activityList", "/StudyMetaData/activityList?studyId=SLEEPWELL"),
        ("activity-daily", "/StudyMetaData/activity?studyId=SLEEPWELL&activityId=daily"),
        ("activity-weekly", "/StudyMetaData/activity?studyId=SLEEPWELL&activityId=weekly"),
        ("activity-kicks", "/StudyMetaData/activity?studyId=SLEEPWELL&activityId=kicks"),
        ("studyDashboard", "/StudyMetaData/studyDashboard?studyId=SLEEPWELL"),
        ("studyUpdates", "/StudyMetaData/studyUpdates?studyId=SLEEPWELL&studyVersion=1.0"),
        ("participantProperties", "/StudyMetaData/participantProperties?studyId=SLEEPWELL"),
        ("notifications", "/StudyMetaData/notifications?skip=0"),
    ]

    @Test func everyAppEndpointAtEveryStep() async throws {
        try await notifications.withStudy { client, root, ios, example, postgres in
            #expect(try await helper.send(client, .put, "/admin/v1/apps/DEMOAPP", token: root, body: MetadataAdmin.gatewayApp).0 == .ok)

            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
            try await check(step: "1-launched", client, ios, postgres)

            // Update 1: an activity and a resource change.
            let update1 = example
                .replacingOccurrences(of: #""title": "Weekly survey""#, with: #""title": "Weekly sleep survey""#)
                .replacingOccurrences(of: #""title": "Study protocol""#, with: #""title": "Study protocol (v2)""#)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: update1).0 == .ok)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root).0 == .ok)
            try await check(step: "2-updated-activity-and-resource", client, ios, postgres)

            // Update 2: the consent changes.
            let update2 = update1.replacingOccurrences(of: "Your data is coded.", with: "Your data is coded and encrypted.")
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: update2).0 == .ok)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates?reconsent=true", token: root).0 == .ok)
            try await check(step: "3-updated-consent", client, ios, postgres)

            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/pause", token: root).0 == .ok)
            try await check(step: "4-paused", client, ios, postgres)

            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/resume", token: root).0 == .ok)
            try await check(step: "5-resumed", client, ios, postgres)
        }
    }

    func check(step: String, _ client: some TestClientProtocol, _ ios: String, _ postgres: PostgresClient) async throws {
        try await notifications.dispatch(postgres)
        let folder = Self.directory.appendingPathComponent(step)
        if Self.recording { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        for (name, uri) in Self.endpoints {
            let (status, body) = try await client.execute(
                uri: uri, method: .get, headers: WCPApp.headers(ios)
            ) { ($0.status, $0.body) }
            var reply = try JSONSerialization.jsonObject(with: Data(buffer: body))
            reply = ["status": Int(status.code), "body": Self.normalized(reply)]
            let text = String(decoding: try JSONSerialization.data(withJSONObject: reply, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]), as: UTF8.self) + "\n"
            let file = folder.appendingPathComponent("\(name).json")
            if Self.recording {
                try text.write(to: file, atomically: true, encoding: .utf8)
                continue
            }
            guard let expected = try? String(contentsOf: file, encoding: .utf8) else {
                Issue.record("\(step)/\(name).json is missing; the reply was:\n\(text)")
                continue
            }
            if let difference = Self.firstDifference(expected, text) {
                Issue.record("\(step)/\(name).json differs at line \(difference); the reply was:\n\(text)")
            }
        }
    }

    /// Where two texts first differ, the line's number and both lines, said first so that a
    /// summary that keeps only a message's start still shows it.
    static func firstDifference(_ expected: String, _ actual: String) -> String? {
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(expectedLines.count, actualLines.count) {
            let want = index < expectedLines.count ? String(expectedLines[index]) : "<none>"
            let got = index < actualLines.count ? String(actualLines[index]) : "<none>"
            if !want.unicodeScalars.elementsEqual(got.unicodeScalars) {
                return "\(index + 1): expected `\(want)`, got `\(got)`"
            }
        }
        return nil
    }

    static let wireInstant = #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}$"#
    static let generatedId = #"^(publish|launch|pause|resume|deactivate)-[0-9a-f-]{36}$"#

    /// Replaces values that depend on when the test runs.
    static func normalized(_ value: Any) -> Any {
        switch value {
        case let object as [String: Any]:
            return object.mapValues(normalized)
        case let array as [Any]:
            return array.map(normalized)
        case let text as String:
            if text.range(of: generatedId, options: .regularExpression) != nil {
                return String(text.prefix { $0 != "-" }) + "-<id>"
            }
            if text.range(of: wireInstant, options: .regularExpression) != nil, let date = parse(text), abs(date.timeIntervalSinceNow) < 3 * 86_400 {
                return "<recent>"
            }
            return text
        default:
            return value
        }
    }

    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        return formatter.date(from: text)
    }
}
