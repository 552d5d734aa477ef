import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TestSupport

/// The MyStudies app API (`/StudyMetaData/...`) against published studies.
@Suite(.needsCluster) struct WCPAPITests {
    let app = WCPApp()

    let helper = MetadataAdmin()

    @Test func credentialsIdentifyTheAppAndPlatform() async throws {
        try await app.withPublishedStudies { client, _, ios, android in
            let (missing, _) = try await app.get(client, "/StudyMetaData/studyList", [HTTPField.Name("applicationId")!: "DEMOAPP"])
            #expect(missing.status == .unauthorized)
            #expect(missing.headerFields[HTTPField.Name("StatusMessage")!] == "Invalid Authorization key")
            #expect(missing.headerFields[HTTPField.Name("status")!] == "101")
            let forged = ios.split(separator: ":")[0] + ":not-the-token"
            #expect(try await app.get(client, "/StudyMetaData/studyList", WCPApp.headers(String(forged))).0.status == .unauthorized)
            #expect(try await app.get(client, "/StudyMetaData/studyList", WCPApp.headers(ios, appId: "OTHERAPP")).0.status == .unauthorized)

            var noOrg = WCPApp.headers(ios)
            noOrg[HTTPField.Name("orgId")!] = nil
            let (invalid, _) = try await app.get(client, "/StudyMetaData/studyList", noOrg)
            #expect(invalid.status == .badRequest)
            #expect(invalid.headerFields[HTTPField.Name("StatusMessage")!] == "Invalid input.")

            let (_, iosList) = try await app.get(client, "/StudyMetaData/studyList", WCPApp.headers(ios))
            let (_, androidList) = try await app.get(client, "/StudyMetaData/studyList", WCPApp.headers(android, android: true))
            let ids = { (reply: [String: Any]) in (reply["studies"] as? [[String: Any]] ?? []).map { $0["studyId"] as? String } }
            #expect(ids(iosList) == ["IOSONLY", "SLEEPWELL"])
            #expect(ids(androidList) == ["SLEEPWELL"])
            let (androidStudy, _) = try await app.get(client, "/StudyMetaData/study?studyId=IOSONLY", WCPApp.headers(android, android: true))
            #expect(androidStudy.status == .notFound)
            #expect(androidStudy.headerFields[HTTPField.Name("status")!] == "103")
        }
    }

    @Test func studyListIsExactlyWhatTheAppsRead() async throws {
        try await app.withPublishedStudies { client, _, ios, _ in
            let (response, reply) = try await app.get(client, "/StudyMetaData/study?studyId=SLEEPWELL", WCPApp.headers(ios))
            #expect(response.status == .ok)
            let golden: [String: Any] = [
                "message": "SUCCESS",
                "studies": [[
                    "studyId": "SLEEPWELL", "studyVersion": "1.0", "studyLanguage": "en", "title": "Sleep Well",
                    "category": "Sleep", "sponsorName": "Example University", "tagline": "How does sleep shape your day?",
                    "status": "Active", "logo": "https://sleepwell.example.org/logo.png",
                    "settings": ["enrolling": true, "platform": "all", "rejoin": true],
                ]],
            ]
            #expect(NSDictionary(dictionary: reply).isEqual(to: golden))

            let (_, spanish) = try await app.get(client, "/StudyMetaData/study?studyId=SLEEPWELL", WCPApp.headers(ios, language: "es"))
            let study = try #require((spanish["studies"] as? [[String: Any]])?.first)
            #expect(study["title"] as? String == "Duerma Bien")
            #expect(study["tagline"] as? String == "¿Cómo influye el sueño en su día?")
            #expect(study["category"] as? String == "Sleep")
            #expect(study["studyLanguage"] as? String == "es")
        }
    }

    @Test func activitiesAreServedByVersionInTheRequestedLanguage() async throws {
        try await app.withPublishedStudies { client, root, ios, android in
            let (status, reply) = try await app.get(
                client, "/StudyMetaData/activity?studyId=SLEEPWELL&activityId=daily&activityVersion=1.0",
                WCPApp.headers(ios, language: "es"))
            #expect(status.status == .ok)
            let activity = try #require(reply["activity"] as? [String: Any])
            #expect(activity["type"] as? String == "questionnaire")
            let metadata = try #require(activity["metadata"] as? [String: Any])
            #expect(metadata["name"] as? String == "Registro diario")
            #expect(metadata["version"] as? String == "1.0")
            #expect(metadata["studyId"] as? String == "SLEEPWELL")
            #expect(metadata["startDate"] as? String == "2027-01-04T08:00:00.000-0500")
            let steps = try #require(activity["steps"] as? [[String: Any]])
            #expect(steps.count == 17)
            #expect(steps[1]["title"] as? String == "¿Qué tal durmió?")
            #expect(steps[1]["resultType"] as? String == "scale")
            #expect((steps[1]["format"] as? [String: Any])?["maxValue"] as? Int == 10)

            // Upcoming studies serve no activities.
            #expect(try await app.get(client, "/StudyMetaData/activity?studyId=IOSONLY&activityId=daily", WCPApp.headers(ios)).0.status == .notFound)

            // An update: the new version is current, the old one stays readable, the app is told.
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            let edited = example.replacingOccurrences(of: #""title": "Weekly survey""#, with: #""title": "Weekly sleep survey""#)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: edited)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root).0 == .ok)
            let (_, current) = try await app.get(client, "/StudyMetaData/activity?studyId=SLEEPWELL&activityId=weekly", WCPApp.headers(android, android: true))
            #expect(((current["activity"] as? [String: Any])?["metadata"] as? [String: Any])?["name"] as? String == "Weekly sleep survey")
            #expect(((current["activity"] as? [String: Any])?["metadata"] as? [String: Any])?["version"] as? String == "1.1")
            let (_, old) = try await app.get(
                client, "/StudyMetaData/activity?studyId=SLEEPWELL&activityId=weekly&activityVersion=1.0", WCPApp.headers(ios))
            #expect(((old["activity"] as? [String: Any])?["metadata"] as? [String: Any])?["name"] as? String == "Weekly survey")

            let (_, updates) = try await app.get(client, "/StudyMetaData/studyUpdates?studyId=SLEEPWELL&studyVersion=1.0", WCPApp.headers(ios))
            #expect(updates["currentVersion"] as? String == "1.1")
            #expect(NSDictionary(dictionary: updates["updates"] as? [String: Any] ?? [:]).isEqual(to: [
                "consent": false, "activities": true, "resources": false, "info": false, "status": "Active",
            ]))
            let (_, upToDate) = try await app.get(client, "/StudyMetaData/studyUpdates?studyId=SLEEPWELL&studyVersion=1.1", WCPApp.headers(ios))
            #expect((upToDate["updates"] as? [String: Any])?["activities"] as? Bool == false)
        }
    }

    @Test func statusChangesReachTheApps() async throws {
        try await app.withPublishedStudies { client, root, ios, _ in
            func status() async throws -> (String?, String?) {
                let (_, list) = try await app.get(client, "/StudyMetaData/study?studyId=SLEEPWELL", WCPApp.headers(ios))
                let (_, updates) = try await app.get(client, "/StudyMetaData/studyUpdates?studyId=SLEEPWELL&studyVersion=1.0", WCPApp.headers(ios))
                return ((list["studies"] as? [[String: Any]])?.first?["status"] as? String,
                        (updates["updates"] as? [String: Any])?["status"] as? String)
            }
            #expect(try await status() == ("Active", "Active"))
            _ = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/pause", token: root)
            #expect(try await status() == ("Paused", "Paused"))
            _ = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/resume", token: root)
            _ = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/deactivate", token: root)
            #expect(try await status() == ("Closed", "Closed"))

            let (_, versions) = try await app.get(client, "/StudyMetaData/versionInfo", WCPApp.headers(ios))
            #expect(NSDictionary(dictionary: versions).isEqual(to: [
                "message": "SUCCESS", "ios": ["latestVersion": "1.10.0", "forceUpdate": "false"],
                "android": ["latestVersion": "1.0", "forceUpdate": "false"],
            ]))
            let (ping, _) = try await app.get(client, "/StudyMetaData/ping", [:])
            #expect(ping.status == .ok)
        }
    }
}
