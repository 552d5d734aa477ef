import Foundation
import NIOCore
import StudyModels
import Testing
import TestSupport

/// The single inputs that once took a service's memory (docs/security.md, Budgets), each sent to
/// the real executables: the input is refused or cut, the service still answers, and its resident
/// memory at its highest (`VmHWM`) stays under the platform's ceiling of 512 MiB per service.
@Suite(.needsCluster) struct MemoryExhaustionTests {
    static let ceiling = 512 << 20

    /// `{"a":{"b":{"a":...}}}` nested `depth` deep, one member each, names drawn from two letters
    /// so the text still compresses well below the ZIP reader's ratio limit but not past it.
    static func nestedObjects(totalBytes: Int, depth: Int = 200) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(totalBytes + 4096)
        while out.count < totalBytes {
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            for _ in 0..<depth {
                out += [UInt8(ascii: "{"), UInt8(ascii: "\""), Bool.random(using: &generator) ? UInt8(ascii: "a") : UInt8(ascii: "b"),
                        UInt8(ascii: "\""), UInt8(ascii: ":")]
            }
            out.append(UInt8(ascii: "1"))
            out += [UInt8](repeating: UInt8(ascii: "}"), count: depth)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// Any enrolled participant (an app token is all it takes): a result archive of under 2 MiB
    /// whose `metadata.json` inflates to 46 MiB of nested one-member objects, sent once and then
    /// four at once. Each is refused for its manifest's size; the service stays under the ceiling.
    @Test func aSmallArchiveThatInflatesToAHugeManifestIsRefusedWithinMemory() async throws {
        try await Platform.run { platform in
            let app = platform.app(.ios)
            let enrolled = try await app.response(
                "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[0]), ("allowDataSharing", "true")])
            let appToken = try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)")

            let manifest = Self.nestedObjects(totalBytes: 46 << 20)
            var zip = ZipWriter()
            zip.add("metadata.json", manifest)
            zip.add("assessmentResult.json", Array(SageArchiveSamples.result(runId: UUID().uuidString).utf8))
            let archive = zip.bytes()
            #expect(archive.count < 2 << 20, "the attack is small: \(archive.count) bytes")
            #expect(manifest.count / archive.count < 200, "within the ZIP reader's ratio, so the manifest is inflated")

            let before = try platform.response.residentMemory()
            let url = platform.response.baseURL + "/sage/v1/studies/DEMOSTUDY/archives"
            let headers = [("Authorization", "Bearer \(appToken)"), ("Content-Type", "application/zip")]
            let once = try await Wire.send(.POST, url, headers: headers, raw: Data(archive))
            #expect(once.status == 422, "\(once.status) \(once.text)")
            #expect(once.text.contains("metadata.json"), "the refusal names the file: \(once.text)")
            #expect(once.text.contains("larger than 262144 bytes"), "and why: \(once.text)")

            let replies = try await withThrowingTaskGroup(of: Wire.Reply.self) { group in
                for _ in 0..<4 { group.addTask { try await Wire.send(.POST, url, headers: headers, raw: Data(archive)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.count == 4)
            for reply in replies { #expect(reply.status == 422, "\(reply.status) \(reply.text)") }
            try await CrashRequestTests.expectAlive(platform)
            let after = try platform.response.residentMemory()
            print("response service, resident MiB: before \(before.now >> 20) (peak \(before.peak >> 20)), after \(after.now >> 20), peak \(after.peak >> 20)")
            #expect(after.peak < Self.ceiling, "peak \(after.peak >> 20) MiB, from \(before.now >> 20) MiB before")
        }
    }

    /// Any admin who may edit a study, then any viewer: a study of 60 daily activities of 48
    /// windows each (all within the document's bounds), a participant in it, and their runs for a
    /// year asked for (a million runs). The reply is cut where one reply's runs end and says so;
    /// the count of their standings in the background is held to the same budget; registration
    /// stays under the ceiling. It was killed for memory twice by the same request, and its
    /// background count took it from 43 MiB to 3.8 GiB.
    @Test func aYearOfRunsOfSixtyBusyActivitiesIsCutAndSaysSo() async throws {
        let steps = Steps(test: "a year of runs")
        try await Platform.run { platform in
            let admin = platform.admin
            let demo = try await steps.run("read the demo draft") { try await admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft") }
            var document = try #require(try JSONSerialization.jsonObject(with: demo.body) as? [String: Any])
            document["studyId"] = "BUSY"
            document["name"] = ["en": "Busy study"]
            document["notifications"] = nil
            document["dashboard"] = nil
            let template = try #require((document["activities"] as? [[String: Any]])?.first)
            let times = (0..<48).map { String(format: "%02d:%02d", $0 / 2, $0 % 2 * 30) }
            document["activities"] = (0..<60).map { index -> [String: Any] in
                var activity = template
                activity["activityId"] = "busy\(index)"
                activity["reminder"] = nil
                activity["schedule"] = ["frequency": "daily", "startDate": "2026-01-01", "endDate": "2030-12-31", "dailyTimes": times]
                return activity
            }
            let body = try JSONSerialization.data(withJSONObject: document)
            let saved = try await steps.run("save the busy draft") { try await admin.send(.PUT, "/admin/v1/studies/BUSY/draft", raw: body) }
            #expect(saved.status == 201, "\(saved.text.prefix(2000))")
            // The question is memory, not time. In a debug build, launching rehearses storing a
            // response to each of the 60 activities, and laying out 100,000 runs takes seconds
            // more; on a machine busy with other tests either can pass Wire's usual 30 s.
            let patience: TimeAmount = .seconds(180)
            let launched = try await steps.run("launch") { try await admin.send(.POST, "/admin/v1/studies/BUSY/launch", timeout: patience) }
            #expect(launched.status == 200, "\(launched.text.prefix(2000))")
            let token = try #require(try await steps.run("an enrollment token") {
                try await admin.tokens(responseBase: platform.response.baseURL, count: 1, studyId: "BUSY").first
            })

            let app = platform.app(.android)
            try await steps.run("sign up") {
                try await PlatformJourneyTests().signUp(app, "busy@example.org", platform: platform, deviceToken: nil)
            }
            let appToken = try #require(try await steps.run("enroll") {
                try await app.response("enroll", [("studyId", "BUSY"), ("token", token), ("allowDataSharing", "true")])
            }.json?["data"]?["appToken"]?.string)
            let state = try await steps.run("updateStudyState") {
                try await app.registration(
                    "updateStudyState", body: ["studies": [["studyId": "BUSY", "status": "inProgress", "participantId": appToken]]])
            }
            #expect(state.status == 200, "\(state.status) \(state.text)")
            // Enrolled on New Year's Day: every window since is one of their runs.
            _ = try await platform.withRegistrationDatabase { postgres, logger in
                try await postgres.query(
                    "UPDATE participant_studies SET enrolled_at = '2026-01-01T00:00:00Z' WHERE study_id = 'BUSY'", logger: logger)
            }
            let participants = try await steps.run("the participants list") {
                try await admin.send(.GET, platform.registration.baseURL + "/admin/v1/studies/BUSY/participants")
            }
            let participant = try #require(participants.json?["participants"]?.array?.first?["participantId"]?.string)

            let before = try platform.registration.residentMemory()
            let url = platform.registration.baseURL + "/admin/v1/studies/BUSY/participants/\(participant)/runs?"
                + Wire.query([("from", "2026-01-01T00:00:00Z"), ("to", "2026-12-31T00:00:00Z")])
            let reply = try await steps.run("a year of runs") {
                try await Wire.send(.GET, url, headers: [("Authorization", "Bearer \(platform.adminToken)")], timeout: patience)
            }
            #expect(reply.status == 200, "\(reply.status) \(reply.text.prefix(500))")
            let runs = try #require(reply.json?["runs"]?.array)
            let cutAt = try #require(reply.json?["cutAt"]?.string, "the reply says where it was cut")
            #expect(runs.count <= ParticipantTimeline.maxRuns, "\(runs.count)")
            #expect(runs.count > ParticipantTimeline.maxRuns - 60 * 48, "cut at a time, not short of it: \(runs.count)")
            // 60 activities, 48 windows a day: the first 100,000 runs end on the 35th day.
            #expect(cutAt.hasPrefix("2026-02-04"), "\(cutAt)")
            #expect(runs.allSatisfy { ($0["start"]?.string ?? "") < cutAt }, "no run at or after the cut")
            try await CrashRequestTests.expectAlive(platform)
            let after = try platform.registration.residentMemory()
            print("registration, resident MiB: before \(before.now >> 20) (peak \(before.peak >> 20)), after \(after.now >> 20), peak \(after.peak >> 20)")
            #expect(after.peak < Self.ceiling, "peak \(after.peak >> 20) MiB, from \(before.now >> 20) MiB before")
        }
    }

    /// The largest inputs the services take from the people who may send them. Any enrolled
    /// participant: four `processResponse` bodies at once, each just under the body limit with
    /// answers at the edge of their node budget, stored and then processed. Any admin who may
    /// edit a study: a draft just under the body limit (6,000 questions with long texts), saved,
    /// then storage-checked, which sends every design to the response service to be rehearsed
    /// against real tables. Each service's peak resident memory stays under the ceiling.
    @Test func theLargestInputsTheServicesTakeKeepThemUnderTheCeiling() async throws {
        try await Platform.run { platform in
            let bodyLimit = 8 << 20
            let app = platform.app(.ios)
            let enrolled = try await app.response(
                "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[0]), ("allowDataSharing", "true")])
            let participant = try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)")
            func largest(run: Int) throws -> [String: Any] {
                var body = JourneyResponses.dailyResponse(participant: participant, name: "daily", version: "1.0")
                var metadata = body["metadata"] as? [String: Any] ?? [:]
                metadata["activityRunId"] = "\(run)"
                body["metadata"] = metadata
                var data = body["data"] as? [String: Any] ?? [:]
                var results = data["results"] as? [[String: Any]] ?? []
                // 250,000 values of the answers' 262,144 nodes, then text up to the body's limit.
                results.append(["resultType": "text", "key": "many", "skipped": false, "value": Array(repeating: 1, count: 250_000)])
                results.append(["resultType": "text", "key": "long", "skipped": false, "value": ""])
                data["results"] = results
                body["data"] = data
                let size = try JSONSerialization.data(withJSONObject: body).count
                results[results.count - 1]["value"] = String(repeating: "x", count: bodyLimit - size - 4_096)
                data["results"] = results
                body["data"] = data
                return body
            }
            // Compact, as Android sends it (the iOS app's pretty printing would take it past the limit).
            let bodies = try (1...4).map { try JSONSerialization.data(withJSONObject: try largest(run: $0)) }
            #expect(bodies[0].count > bodyLimit - 8_192 && bodies[0].count < bodyLimit, "\(bodies[0].count) bytes")
            let before = try platform.response.residentMemory()
            let url = platform.response.baseURL + "/mobileappstudy-processResponse.api"
            let replies = try await withThrowingTaskGroup(of: Wire.Reply.self) { group in
                for body in bodies {
                    group.addTask { try await Wire.send(.POST, url, headers: [("Content-Type", "application/json")], raw: body) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.count == 4)
            for reply in replies { #expect(reply.status == 200, "\(reply.status) \(reply.text.prefix(300))") }
            let settled = try await eventually("the four responses processed", within: .seconds(120)) { () async throws -> [JSONValue]? in
                let list = try await platform.admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/responses")
                let responses = list.json?["responses"]?.array ?? []
                return responses.count == 4 && responses.allSatisfy({ $0["status"]?.string != "pending" }) ? responses : nil
            }
            #expect(settled.count == 4)
            try await CrashRequestTests.expectAlive(platform)
            let afterResponses = try platform.response.residentMemory()
            print("response service under four largest responses, resident MiB: before \(before.now >> 20), after \(afterResponses.now >> 20), peak \(afterResponses.peak >> 20)")
            #expect(afterResponses.peak < Self.ceiling, "peak \(afterResponses.peak >> 20) MiB")

            // The largest draft an admin can save.
            let admin = platform.admin
            let demo = try await admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft")
            var document = try #require(try JSONSerialization.jsonObject(with: demo.body) as? [String: Any])
            document["studyId"] = "WIDE"
            document["name"] = ["en": "Wide study"]
            document["notifications"] = nil
            document["dashboard"] = nil
            let activities = try #require(document["activities"] as? [[String: Any]])
            let template = try #require(activities.first { $0["activityId"] as? String == "daily" })
            let textStep = try #require((template["steps"] as? [[String: Any]])?.first { $0["resultType"] as? String == "text" })
            // The longest titles that keep the draft under the body's limit.
            var draft = Data()
            for repeats in (1...48).reversed() {
                let title = String(repeating: "How did the day go, in your own words? ", count: repeats)
                document["activities"] = (0..<40).map { index -> [String: Any] in
                    var activity = template
                    activity["activityId"] = "wide\(index)"
                    activity["reminder"] = nil
                    activity["steps"] = (0..<150).map { number -> [String: Any] in
                        var step = textStep
                        step["key"] = "q\(number)"
                        step["title"] = textStep["title"] is String ? title : ["en": title]
                        return step
                    }
                    return activity
                }
                draft = try JSONSerialization.data(withJSONObject: document)
                if draft.count < bodyLimit - 65_536 { break }
            }
            #expect(draft.count > bodyLimit * 3 / 4 && draft.count < bodyLimit, "\(draft.count) bytes")
            let metadataBefore = try platform.metadata.residentMemory()
            // Each may take a while on a machine running the whole suite: the rehearsal makes and
            // rolls back 40 tables of 150 columns.
            let saved = try await admin.send(.PUT, "/admin/v1/studies/WIDE/draft", raw: draft, timeout: .seconds(300))
            #expect(saved.status == 201, "\(saved.text.prefix(2000))")
            let check = try await admin.send(.GET, "/admin/v1/studies/WIDE/storage-check", timeout: .seconds(300))
            #expect(check.status == 200, "\(check.text.prefix(2000))")
            #expect(check.json?["problems"]?.array?.isEmpty == true, "\(check.text.prefix(2000))")
            try await CrashRequestTests.expectAlive(platform)
            let metadataAfter = try platform.metadata.residentMemory()
            let responseAfter = try platform.response.residentMemory()
            print("study-metadata under the largest draft, resident MiB: before \(metadataBefore.now >> 20), after \(metadataAfter.now >> 20), peak \(metadataAfter.peak >> 20); response service after its rehearsal: peak \(responseAfter.peak >> 20)")
            #expect(metadataAfter.peak < Self.ceiling, "peak \(metadataAfter.peak >> 20) MiB")
            #expect(responseAfter.peak < Self.ceiling, "peak \(responseAfter.peak >> 20) MiB")
        }
    }
}
