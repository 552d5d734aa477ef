import Foundation
import HTTPTypes
import HummingbirdTesting
import JSONText
import StudyModels
import Testing
import TestSupport

/// `POST /admin/v1/apps/{appId}/move-in/studies`: who may move studies in, what a bad request is
/// told (with nothing written), and a study read from the replies a MyStudies deployment sent,
/// recorded with the MyStudies Android app (Tests/Fixtures/mystudies-api): once imported, the
/// apps are served what that deployment served them.
@Suite(.needsCluster) struct MoveInAPITests {
    let api = WCPApp()
    static let schedules = RecordedMyStudiesReplies.frequencies

    static func reply(_ name: String) throws -> JSONValue { try RecordedMyStudiesReplies.reply(name) }

    static func export() throws -> String { try RecordedMyStudiesReplies.exportText() }

    static let path = "/admin/v1/apps/DEMOAPP/move-in/studies"

    @Test func onlyASuperAdminMovesStudiesInAndBadRequestsChangeNothing() async throws {
        try await api.withPublishedStudies { client, root, _, _ in
            let export = try Self.export()
            let (_, studyAdmin) = try await api.helper.makeAdmin(client, root: root, email: "coordinator@studystack.test")
            #expect(try await api.helper.send(client, .post, Self.path + "?timeZone=UTC", token: studyAdmin, body: export).0 == .forbidden)
            #expect(try await api.helper.send(client, .post, Self.path, token: root, body: export).0 == .badRequest)
            let (zone, zoneBody) = try await api.helper.send(client, .post, Self.path + "?timeZone=Mars/Olympus", token: root, body: export)
            #expect(zone == .unprocessableContent)
            #expect(String(buffer: zoneBody).contains("is not an IANA time zone"))
            #expect(try await api.helper.send(client, .post, Self.path + "?timeZone=UTC&dryRun=maybe", token: root, body: export).0 == .badRequest)
            let (malformed, malformedBody) = try await api.helper.send(
                client, .post, Self.path + "?timeZone=UTC", token: root, body: #"{"source": 1, "readAt": "", "studies": []}"#)
            #expect(malformed == .unprocessableContent)
            #expect(String(buffer: malformedBody).contains("/source"))
            #expect(try await api.helper.send(
                client, .post, "/admin/v1/apps/NOAPP/move-in/studies?timeZone=UTC", token: root, body: export).0 == .notFound)
            // Nothing of any of these was written, nor by a dry run.
            let (dry, _) = try await api.helper.send(client, .post, Self.path + "?timeZone=UTC", token: root, body: export)
            #expect(dry == .ok)
            #expect(try await api.helper.send(client, .get, "/admin/v1/studies/REGteststudy/draft", token: root).0 == .notFound)
        }
    }

    /// An earlier design the study model refuses (a branch to a step it does not have) refuses
    /// the study in the dry run, located in its version, rather than stopping the import half way.
    @Test func anEarlierDesignThatCannotBePublishedRefusesTheStudyWithNothingWritten() async throws {
        try await api.withPublishedStudies { client, root, _, _ in
            var export = try RecordedMyStudiesReplies.export(studyId: "BROKENHISTORY")
            let broken = try JSONDecoder().decode(JSONValue.self, from: Data("""
                {"activity": {"type": "questionnaire", "metadata": {"activityId": "WeeklyTest", "version": "0.9"},
                 "steps": [{"type": "question", "resultType": "boolean", "key": "q1", "title": "Yes?",
                            "destinations": [{"condition": "true", "destination": "nowhere"}]}]}}
                """.utf8))
            export.studies[0].activities.append(.init(activityId: "WeeklyTest", version: "0.9", reply: broken))
            let body = String(decoding: try JSONEncoder().encode(export), as: UTF8.self)
            for dryRun in ["true", "false"] {
                let (status, reply) = try await api.helper.send(
                    client, .post, Self.path + "?timeZone=UTC&dryRun=\(dryRun)", token: root, body: body)
                #expect(status == .ok)
                let report = try JSONDecoder().decode(StudyMoveInReport.self, from: Data(buffer: reply))
                let study = try #require(report.studies.first)
                #expect(study.state == .refused)
                #expect(study.versions == ["moved-1", "2.3"])
                #expect(study.findings.contains {
                    $0.at.hasPrefix("version moved-1#/activities/") && $0.at.hasSuffix("/destination") && $0.message.contains("nowhere")
                })
            }
            #expect(try await api.helper.send(client, .get, "/admin/v1/studies/BROKENHISTORY/draft", token: root).0 == .notFound)
        }
    }

    @Test func aStudyFromRecordedRepliesIsServedAsTheyWere() async throws {
        try await api.withPublishedStudies { client, root, ios, _ in
            let (status, body) = try await api.helper.send(
                client, .post, Self.path + "?timeZone=UTC&dryRun=false", token: root, body: try Self.export())
            #expect(status == .ok, "\(String(buffer: body))")
            let report = try JSONDecoder().decode(StudyMoveInReport.self, from: Data(buffer: body))
            #expect(report.studies.map(\.state) == [.new])
            #expect(report.studies.first?.versionsHere == 1)
            #expect(report.studies.first?.counts.activities == 6)
            // The schedules ended in 2020: kept for their responses, as the source had them.
            let (_, list) = try await api.get(client, "/StudyMetaData/studyList", WCPApp.headers(ios))
            let listed = (list["studies"] as? [[String: Any]])?.first { $0["studyId"] as? String == "REGteststudy" }
            #expect(listed?["studyVersion"] as? String == "2.3")
            #expect(listed?["status"] as? String == "Active")

            let (_, served) = try await api.get(client, "/StudyMetaData/activityList?studyId=REGteststudy", WCPApp.headers(ios))
            let activities = try #require(served["activities"] as? [[String: Any]])
            #expect(activities.count == Self.schedules.count)
            for name in Self.schedules {
                let recorded = try Self.reply("activityList-\(name).json")
                let id = try #require(recorded["activityId"]?.string)
                let item = try #require(activities.first { $0["activityId"] as? String == id })
                #expect(item["activityVersion"] as? String == recorded["activityVersion"]?.string)
                #expect(item["startTime"] as? String == recorded["startTime"]?.string, "\(id) startTime")
                #expect(item["endTime"] as? String == recorded["endTime"]?.string, "\(id) endTime")
                #expect(item["schedulingType"] as? String == "Regular")
                let frequency = try #require(item["frequency"] as? [String: Any])
                #expect(frequency["type"] as? String == recorded["frequency"]?["type"]?.string)
                let runs = (frequency["runs"] as? [[String: String]]) ?? []
                let recordedRuns = recorded["frequency"]?["runs"]?.array ?? []
                #expect(runs.count == recordedRuns.count)
                for (run, wanted) in zip(runs, recordedRuns) {
                    #expect(run["startTime"] == wanted["startTime"]?.string, "\(id) run start")
                    #expect(run["endTime"] == wanted["endTime"]?.string, "\(id) run end")
                }
            }

            // The design, with the branching the apps compare by (`gte`, `lt`).
            let (_, design) = try await api.get(
                client, "/StudyMetaData/activity?studyId=REGteststudy&activityId=WeeklyTest&activityVersion=1.0", WCPApp.headers(ios))
            let steps = try #require((design["activity"] as? [String: Any])?["steps"] as? [[String: Any]])
            let destinations = try #require(steps.first?["destinations"] as? [[String: String]])
            #expect(destinations.prefix(2).map { $0["operator"] } == ["gte", "lt"])

            let (_, consent) = try await api.get(client, "/StudyMetaData/eligibilityConsent?studyId=REGteststudy", WCPApp.headers(ios))
            let consentReply = try #require(consent["consent"] as? [String: Any])
            #expect(consentReply["version"] as? String == "1.1")
            let correct = (consentReply["comprehension"] as? [String: Any])?["correctAnswers"] as? [[String: Any]]
            #expect(correct?.map { $0["answer"] as? [String] } == [["ios", "android"], ["Yes"]])
            let eligibility = try #require(consent["eligibility"] as? [String: Any])
            #expect((eligibility["test"] as? [[String: Any]])?.map { $0["title"] as? String } == ["Had lunch?", "Are you sleepy?"])
        }
    }
}
