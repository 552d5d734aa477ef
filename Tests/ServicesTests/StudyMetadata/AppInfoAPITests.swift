import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StudyModels
import Testing
import TestSupport

/// `appUpdates`, `gatewayInfo` and `participantProperties`.
@Suite(.needsCluster) struct AppInfoAPITests {
    let api = WCPApp()
    let helper = MetadataAdmin()

    @Test func appUpdatesComparesVersionsNumberByNumber() async throws {
        try await api.withPublishedStudies { client, root, ios, android in
            #expect(try await helper.send(client, .put, "/admin/v1/apps/DEMOAPP", token: root, body: MetadataAdmin.gatewayApp).0 == .ok)
            // 1.9 is older than 1.10 (the original compared floats and said otherwise).
            let (head, old) = try await api.get(
                client, "/StudyMetaData/appUpdates?appVersion=1.9&os=ios", WCPApp.headers(ios))
            #expect(head.status == .ok)
            #expect(old["currentVersion"] as? String == "1.10.0")
            #expect(old["forceUpdate"] as? Bool == true)
            #expect(old["message"] as? String == "Please update.")
            let (_, spanish) = try await api.get(
                client, "/StudyMetaData/appUpdates?appVersion=1.9", WCPApp.headers(ios, language: "es"))
            #expect(spanish["message"] as? String == "Actualice, por favor.")
            let (_, current) = try await api.get(
                client, "/StudyMetaData/appUpdates?appVersion=1.10", WCPApp.headers(ios))
            #expect(current["forceUpdate"] as? Bool == false)
            #expect(current["message"] as? String == "")
            // The credential's platform decides which release counts.
            let (_, androidReply) = try await api.get(
                client, "/StudyMetaData/appUpdates?appVersion=1.9", WCPApp.headers(android, android: true))
            #expect(androidReply["currentVersion"] as? String == "2.0")
            #expect(androidReply["forceUpdate"] as? Bool == false)

            for bad in ["", "?appVersion=", "?appVersion=one"] {
                let (invalid, _) = try await api.get(client, "/StudyMetaData/appUpdates\(bad)", WCPApp.headers(ios))
                #expect(invalid.status == .badRequest)
                #expect(invalid.headerFields[HTTPField.Name("status")!] == "102")
            }
        }
    }

    @Test func gatewayInfoServesTheAppsHomeContent() async throws {
        try await api.withPublishedStudies { client, root, ios, _ in
            let (none, _) = try await api.get(client, "/StudyMetaData/gatewayInfo", WCPApp.headers(ios))
            #expect(none.status == .notFound)
            #expect(none.headerFields[HTTPField.Name("status")!] == "103")

            #expect(try await helper.send(client, .put, "/admin/v1/apps/DEMOAPP", token: root, body: MetadataAdmin.gatewayApp).0 == .ok)
            let (head, reply) = try await api.get(
                client, "/StudyMetaData/gatewayInfo", WCPApp.headers(ios, language: "es"))
            #expect(head.status == .ok)
            let info = reply["info"] as? [[String: String]] ?? []
            #expect(info.count == 2)
            #expect(info.first == [
                "type": "video", "image": "https://example.org/a.png", "title": "Welcome",
                "text": "Investigación desde su teléfono.", "videoLink": "https://example.org/v.mp4",
            ])
            #expect(info.last?["type"] == "image")
            #expect(info.last?["videoLink"] == "")
            let resources = reply["resources"] as? [[String: String]] ?? []
            #expect(resources == [
                ["resourcesId": "about", "title": "About", "type": "html", "content": "<p>About us</p>"],
                ["resourcesId": "faq", "title": "FAQ", "type": "pdf", "content": "https://example.org/faq.pdf"],
            ])

            // A PDF resource without a URL, a repeated id and a bad image are all reported.
            let broken = MetadataAdmin.gatewayApp
                .replacingOccurrences(of: "https://example.org/faq.pdf", with: "faq.pdf")
                .replacingOccurrences(of: #""resourceId": "faq""#, with: #""resourceId": "about""#)
                .replacingOccurrences(of: "https://example.org/b.png", with: "b.png")
            let (status, body) = try await helper.send(client, .put, "/admin/v1/apps/DEMOAPP", token: root, body: broken)
            #expect(status == .unprocessableContent)
            let pointers = try body.decodeJSON(MetadataAdmin.Problems.self).error.problems?.map(\.pointer)
            #expect(pointers == ["/gateway/info/1/image", "/gateway/resources/1/resourceId", "/gateway/resources/1/content"])
        }
    }

    /// The LabKey WCP's shape, as in the original server's test designs
    /// (`Tests/Fixtures/labkey/ParticipantPropertiesMetadata`).
    @Test func participantPropertiesHaveTheLabKeyShape() async throws {
        try await api.withPublishedStudies { client, _, ios, _ in
            let (head, reply) = try await api.get(
                client, "/StudyMetaData/participantProperties?studyId=SLEEPWELL", WCPApp.headers(ios))
            #expect(head.status == .ok)
            let conformance = try JSONSerialization.jsonObject(with: Data(contentsOf: Conformance.labkey
                .appendingPathComponent("ParticipantPropertiesMetadata/OriginalParticipantProperty.json"))) as! [String: Any]
            #expect(Set(reply.keys) == Set(conformance.keys))
            let expectedKeys = Set(((conformance["participantProperties"] as! [[String: Any]])[0]).keys)
            let properties = reply["participantProperties"] as? [[String: Any]] ?? []
            #expect(properties.count == 1)
            #expect(Set(properties[0].keys) == expectedKeys)
            #expect(properties[0]["propertyId"] as? String == "surgeryDate")
            #expect(properties[0]["propertyName"] as? String == "Date of surgery")
            #expect(properties[0]["propertyType"] as? String == "preenrollment")
            #expect(properties[0]["propertyDataType"] as? String == "date")
            #expect(properties[0]["shouldRefresh"] as? Bool == false)
            #expect(reply["metadata"] as? [String: String] == ["studyId": "SLEEPWELL", "studyVersion": "1.0"])

            let (future, _) = try await api.get(
                client, "/StudyMetaData/participantProperties?studyId=SLEEPWELL&studyVersion=1.5",
                WCPApp.headers(ios))
            #expect(future.status == .notFound)
            let (missing, _) = try await api.get(client, "/StudyMetaData/participantProperties", WCPApp.headers(ios))
            #expect(missing.status == .badRequest)
        }
    }
}
