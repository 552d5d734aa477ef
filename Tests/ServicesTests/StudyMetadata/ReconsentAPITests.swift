import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// A consent change after launch, with the team's choice on re-consent (WCP's "enforce e-consent
/// flow again for enrolled participants"), as the apps learn it: `studyUpdates`' `updates.consent`
/// and `enrollAgain`, `consentDocument`'s `enrollAgain` (inside `consent`, where 2.x's study
/// datastore puts it, and beside it, where 2.x's Android app reads it), and registration's list
/// of the consent versions a signature satisfies.
@Suite(.needsCluster) struct ReconsentAPITests {
    let api = WCPApp()

    func publishUpdates(_ client: some TestClientProtocol, _ root: String, _ query: String = "") async throws
        -> (HTTPResponse.Status, [String: Any])
    {
        let (status, body) = try await api.helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates\(query)", token: root)
        return (status, (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:])
    }

    func versionCount(_ client: some TestClientProtocol, _ root: String) async throws -> Int {
        let (_, body) = try await api.helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/versions", token: root)
        return ((try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["versions"] as? [Any])?.count ?? -1
    }

    func inForce(_ client: some TestClientProtocol) async throws -> [String]? {
        let path = "/internal/v1/studies/SLEEPWELL/standing"
        let body = try await client.execute(
            uri: path, method: .get,
            headers: TestApplication.signedHeaders(caller: .registration, to: .studyMetadata, method: .get, path: path)
        ) { $0.body }
        return try body.decodeJSON(StudyStanding.self).consentVersionsInForce
    }

    @Test func aConsentChangeAsksTheTeamAndTellsTheAppsWhoMustSignAgain() async throws {
        try await api.withPublishedStudies { client, root, ios, android in
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            func draft(_ text: String) async throws {
                #expect(try await api.helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: text).0 == .ok)
            }
            func updates(from held: String, android: Bool = false) async throws -> [String: Any] {
                let (_, reply) = try await api.get(
                    client, "/StudyMetaData/studyUpdates?studyId=SLEEPWELL&studyVersion=\(held)",
                    WCPApp.headers(android ? androidCredential : ios, android: android))
                return reply
            }
            let androidCredential = android
            func document(_ version: String = "") async throws -> [String: Any] {
                try await api.get(
                    client, "/StudyMetaData/consentDocument?studyId=SLEEPWELL&consentVersion=\(version)", WCPApp.headers(ios)).1
            }
            #expect(try await inForce(client) == nil)

            // A consent change without the choice, or with a word that is not one: refused, nothing frozen.
            try await draft(example.replacingOccurrences(of: "We collect your answers.", with: "We collect your answers, encrypted."))
            let (unchosen, unchosenBody) = try await publishUpdates(client, root)
            #expect(unchosen == .badRequest)
            let message = (unchosenBody["error"] as? [String: Any])?["message"] as? String
            #expect(message?.contains("say whether participants who signed an earlier version must sign this one (reconsent=true)") == true)
            #expect(try await publishUpdates(client, root, "?reconsent=yes").0 == .badRequest)
            #expect(try await versionCount(client, root) == 1)
            // A choice on an action that publishes no consent change: refused, nothing changes.
            #expect(try await api.helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/pause?reconsent=true", token: root).0 == .badRequest)
            let (_, list) = try await api.get(client, "/StudyMetaData/studyList", WCPApp.headers(ios))
            #expect((list["studies"] as? [[String: Any]])?.first { $0["studyId"] as? String == "SLEEPWELL" }?["status"] as? String == "Active")

            // A correction no one need sign again: the apps that hold 1.0 are told of no consent update.
            let (minor, minorBody) = try await publishUpdates(client, root, "?reconsent=false")
            #expect(minor == .ok)
            #expect(((minorBody["version"] as? [String: Any])?["changes"] as? [String: Any])?["reconsent"] as? Bool == false)
            let afterMinor = try await updates(from: "1.0")
            #expect((afterMinor["updates"] as? [String: Any])?["consent"] as? Bool == false)
            #expect(afterMinor["enrollAgain"] as? Bool == false)
            #expect(((try await document())["consent"] as? [String: Any])?["enrollAgain"] as? Bool == false)
            #expect(try await inForce(client) == nil)

            // A change everyone must sign again.
            try await draft(example.replacingOccurrences(of: "We collect your answers.", with: "We collect your answers and your location."))
            let (major, majorBody) = try await publishUpdates(client, root, "?reconsent=true")
            #expect(major == .ok)
            #expect(((majorBody["version"] as? [String: Any])?["changes"] as? [String: Any])?["reconsent"] as? Bool == true)
            for (held, android) in [("1.0", false), ("1.1", false), ("1.1", true)] {
                let reply = try await updates(from: held, android: android)
                #expect((reply["updates"] as? [String: Any])?["consent"] as? Bool == true, "from \(held)")
                #expect(reply["enrollAgain"] as? Bool == true, "from \(held)")
                #expect(reply["currentVersion"] as? String == "1.2")
            }
            let current = try await updates(from: "1.2")
            #expect((current["updates"] as? [String: Any])?["consent"] as? Bool == false && current["enrollAgain"] as? Bool == false)
            let signed = try await document()
            #expect((signed["consent"] as? [String: Any])?["version"] as? String == "1.2")
            #expect((signed["consent"] as? [String: Any])?["enrollAgain"] as? Bool == true)
            #expect(signed["enrollAgain"] as? Bool == true)
            let earlier = try await document("1.1")
            #expect((earlier["consent"] as? [String: Any])?["enrollAgain"] as? Bool == false && earlier["enrollAgain"] as? Bool == false)
            #expect(try await inForce(client) == ["1.2"])

            // A later correction keeps the signature of 1.2 good, and 1.3's too.
            try await draft(example.replacingOccurrences(of: "We collect your answers.", with: "We collect your answers and your location, weekly."))
            #expect(try await publishUpdates(client, root, "?reconsent=false").0 == .ok)
            #expect(try await inForce(client) == ["1.2", "1.3"])
            let sinceMajor = try await updates(from: "1.2")
            #expect((sinceMajor["updates"] as? [String: Any])?["consent"] as? Bool == false)
            // From before the re-consent, it is still owed.
            #expect(((try await updates(from: "1.1"))["updates"] as? [String: Any])?["consent"] as? Bool == true)

            // An update that leaves the consent alone takes no choice.
            try await draft(
                example.replacingOccurrences(of: "We collect your answers.", with: "We collect your answers and your location, weekly.")
                    .replacingOccurrences(of: "How does sleep shape your day?", with: "How does sleep shape your week?"))
            #expect(try await publishUpdates(client, root, "?reconsent=true").0 == .badRequest)
            #expect(try await publishUpdates(client, root).0 == .ok)
            #expect(try await versionCount(client, root) == 5)

            // The choice is in the audit log.
            let (_, audit) = try await api.helper.send(client, .get, "/admin/v1/audit?studyId=SLEEPWELL&limit=100", token: root)
            let events = (((try JSONSerialization.jsonObject(with: Data(buffer: audit)) as? [String: Any])?["events"] as? [[String: Any]]) ?? [])
                .filter { $0["action"] as? String == "study.publish-updates" }
            try #require(events.count == 4)
            #expect(events.filter { ($0["details"] as? [String: String])?["reconsent"] == "true" }.count == 1)
        }
    }
}
