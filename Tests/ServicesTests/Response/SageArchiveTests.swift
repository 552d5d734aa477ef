import Crypto
import Foundation
import HTTPTypes
import Logging
import NIOCore
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// `POST /sage/v1/studies/{studyId}/archives`: Sage's result archives stored once, their answers
/// in the study's tables, and every bad archive refused with nothing stored.
@Suite(.needsCluster) struct SageArchiveTests {
    let sage = SageArchiveFixture()
    let processing = ProcessingFixture()

    @Test func anArchiveIsStoredOnceAndItsAnswersLandInTheStudysTablesByType() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let runId = UUID().uuidString
            let archive = SageArchiveFixture.archive(runId: runId)
            let (status, body) = try await sage.post(h, archive, appToken: appToken)
            #expect(status == .created, "\(body)")
            let archiveId = try #require(body["archiveId"]?.string)
            // The same run again, even zipped anew with another answer: the first archive.
            let (again, againBody) = try await sage.post(h, SageArchiveFixture.archive(runId: runId, hours: 9), appToken: appToken)
            #expect(again == .ok)
            #expect(againBody["archiveId"]?.string == archiveId)
            #expect(try await sage.count(h, "sage_archives") == 1)
            #expect(try await sage.count(h, "responses") == 1)

            let responseId = try await processing.latest(h)
            let (settled, error) = try await processing.settled(h, responseId)
            #expect(settled == "processed", "\(error ?? "")")
            let top = try await sage.rows(h, list: "sleep")
            #expect(top.count == 1)
            #expect(top.first?["hours"] == .number(7))
            #expect(top.first?["notes"] == .null)
            #expect(top.first?["nap"] == .number(1800))
            let feeling = try await sage.rows(h, list: "sleepmood_feeling")
            #expect(feeling.count == 1)
            #expect(feeling.first?["mood_feeling"] == .string("2"))
            let factors = try await sage.rows(h, list: "sleepmood_factors")
            #expect(factors.count == 2)
            #expect(factors.map { $0["mood_factors"] } == [.string("noise"), .string("light")])
            // Each answer's timing, as the MyStudies apps' answers keep theirs.
            #expect(try await sage.count(h, "response_metadata WHERE field_name = 'hours' AND skipped = false") == 1)
            #expect(try await sage.count(h, "response_metadata WHERE field_name = 'notes' AND skipped = true") == 1)
            #expect(try await sage.count(h, "audit_events WHERE action = 'sage.archive_received'") == 1)
        }
    }

    /// Archives that arrive together are written by one statement: the same run sent eight times
    /// at once (a client retrying on a bad network) is stored once, and every sender hears of it.
    @Test func theSameRunSentManyTimesAtOnceIsStoredOnce() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let other = try await sage.enroll(h)
            let archive = SageArchiveFixture.archive()
            let replies = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for index in 0..<10 {
                    group.addTask {
                        let (status, body) = try await sage.post(h, index < 8 ? archive : SageArchiveFixture.archive(), appToken: index == 9 ? other : appToken)
                        return (status, body["archiveId"]?.string)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.count == 10)
            #expect(replies.allSatisfy { $0.1 != nil })
            #expect(replies.filter { $0.0 == .created }.count == 3, "\(replies)")
            #expect(replies.filter { $0.0 == .ok }.count == 7, "\(replies)")
            #expect(Set(replies.compactMap(\.1)).count == 3)
            #expect(try await sage.count(h, "sage_archives") == 3)
            #expect(try await sage.count(h, "responses") == 3)
            #expect(try await sage.count(h, "audit_events WHERE action = 'sage.archive_received'") == 3)
        }
    }

    @Test func anOlderClientsFlatAnswersAreReadByTheColumnsTheyMeet() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            let (status, body) = try await sage.post(h, SageArchiveFixture.flatArchive(), appToken: appToken)
            #expect(status == .created, "\(body)")
            let (settled, error) = try await processing.settled(h, try await processing.latest(h))
            #expect(settled == "processed", "\(error ?? "")")
            let top = try await sage.rows(h, list: "sleep")
            #expect(top.count == 1)
            #expect(top.first?["hours"] == .number(6))
            #expect(top.first?["notes"] == .string("slept badly"))
            #expect(top.first?["nap"] == .number(600))
            let factors = try await sage.rows(h, list: "sleepmood_factors")
            #expect(factors.map { $0["mood_factors"] } == [.string("worry"), .string("noise")])
            // No taskRunUUID: the archive's SHA-256 recognises it sent again.
            let (again, _) = try await sage.post(h, SageArchiveFixture.flatArchive(), appToken: appToken)
            #expect(again == .ok)
            #expect(try await sage.count(h, "sage_archives") == 1)
        }
    }

    @Test func badArchivesAndBadCallersAreRefusedWithNothingStoredAndContentKept() async throws {
        try await ResponseHarness.run(overrides: ["sage.maxArchiveBytes": "2097152"]) { h in
            try await sage.announce(h)
            #expect(try await h.studyEvent("OTHERSTUDY") == .ok)
            let appToken = try await sage.enroll(h)
            let good = SageArchiveFixture.archive()

            var traversal = ZipWriter()
            traversal.add("metadata.json", Array(SageArchiveFixture.metadata(files: ["../motion.json"]).utf8))
            traversal.add("../motion.json", Array("[]".utf8))
            // 1 KB of deflate claiming 1 GiB, and a real 1 GiB of zeros in about 1 MB.
            var bomb = ZipWriter()
            bomb.add("metadata.json", Array(SageArchiveFixture.metadata(files: []).utf8))
            bomb.entries.append(.init(name: "motion.json", data: []))
            let zeros = ZipWriter.deflated(chunks: 1_024) { [UInt8](repeating: 0, count: 1 << 20) }
            let tiny = ZipWriter.deflated([UInt8](repeating: 0, count: 1 << 20))
            var many = ZipWriter()
            for index in 0..<10_000 { many.add("f\(index).json", [UInt8(ascii: "1")], deflate: false) }
            #expect(many.entries.count == 10_000)
            var noManifest = ZipWriter()
            noManifest.add("assessmentResult.json", Array(SageArchiveFixture.result(runId: "r").utf8))
            var otherAssessment = ZipWriter()
            otherAssessment.add("metadata.json", Array(SageArchiveFixture.metadata(files: ["assessmentResult.json"]).utf8))
            otherAssessment.add("assessmentResult.json", Array(SageArchiveFixture.result(runId: "r").replacingOccurrences(of: #""sleep""#, with: #""walk""#).utf8))
            var wrongMD5: HTTPFields = [:]
            wrongMD5[HTTPField.Name("Content-MD5")!] = Data(Insecure.MD5.hash(data: [1, 2, 3])).base64EncodedString()

            let cases: [(String, [UInt8], String?, String, HTTPFields, HTTPResponse.Status, String)] = [
                ("../ in a name", traversal.bytes(), appToken, SageArchiveFixture.study, [:], .unprocessableContent, "may not hold . or .."),
                ("a bomb claiming 1 GiB", bomb.bytes(compressed: ["motion.json": (Array(tiny.prefix(1_024)), 1 << 30, 0)]), appToken,
                 SageArchiveFixture.study, [:], .unprocessableContent, "larger than"),
                ("a bomb of 1 GiB in 1 MB", bomb.bytes(compressed: ["motion.json": (zeros, 1 << 30, 0)]), appToken,
                 SageArchiveFixture.study, [:], .unprocessableContent, "larger than"),
                ("10,000 tiny files", many.bytes(), appToken, SageArchiveFixture.study, [:], .unprocessableContent, "files"),
                ("a truncated zip", Array(good.dropLast(40)), appToken, SageArchiveFixture.study, [:], .unprocessableContent, "ZIP"),
                ("no metadata.json", noManifest.bytes(), appToken, SageArchiveFixture.study, [:], .unprocessableContent, "metadata.json"),
                ("an assessment the study has not", otherAssessment.bytes(), appToken, SageArchiveFixture.study, [:],
                 .unprocessableContent, "no published activity walk"),
                ("not a zip", Array("hello".utf8), appToken, SageArchiveFixture.study, [:], .unprocessableContent, "neither"),
                ("sealed, but the study has no key", [0x30, 0x80, 1, 2], appToken, SageArchiveFixture.study, [:],
                 .unprocessableContent, "no key pair"),
                ("a damaged body", good, appToken, SageArchiveFixture.study, wrongMD5, .badRequest, "Content-MD5"),
                ("over the size limit", good + [UInt8](repeating: 0, count: 2 << 20), appToken, SageArchiveFixture.study, [:],
                 .contentTooLarge, ""),
                ("no app token", good, nil, SageArchiveFixture.study, [:], .unauthorized, "app token"),
                ("an unknown app token", good, "not-a-token", SageArchiveFixture.study, [:], .unauthorized, "no participant"),
                ("another study's path", good, appToken, "OTHERSTUDY", [:], .forbidden, "not a participant"),
            ]
            #expect(cases.count == 14)
            for (name, body, token, study, headers, expected, words) in cases {
                let (status, reply) = try await sage.post(h, body, appToken: token, study: study, headers: headers)
                #expect(status == expected, "\(name): \(reply)")
                #expect(words.isEmpty || reply.serialized(sortedKeys: true).contains(words), "\(name): \(reply)")
            }
            #expect(try await sage.count(h, "sage_archives") == 0)
            #expect(try await sage.count(h, "responses") == 0)
            // What a participant sent and the server refused for its content is kept, with why
            // (docs/sage.md, Refused archives): the nine cases from "../ in a name" to "sealed,
            // but the study has no key". A damaged body, one past the size limit and one from no
            // participant, or from another study's path, keep nothing.
            #expect(try await sage.count(h, "sage_refused_archives") == 9)
            #expect(try await sage.count(h, "sage_refused_archives WHERE door = 'archives' AND reason <> ''") == 9)
            #expect(try await sage.count(h, "audit_events WHERE action LIKE 'sage.%'") == 9)
            #expect(try await sage.count(h, "audit_events WHERE action = 'sage.archive_refused'") == 9)
        }
    }

    @Test func aWithdrawnParticipantsArchivesAreRefusedAndDeletedWithTheirData() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            #expect(try await sage.post(h, SageArchiveFixture.archive(), appToken: appToken).0 == .created)
            #expect(try await sage.count(h, "sage_archives") == 1)
            let (status, _, _) = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": appToken, "delete": "true"])
            #expect(status == .ok)
            #expect(try await sage.count(h, "sage_archives") == 0)
            #expect(try await sage.post(h, SageArchiveFixture.archive(), appToken: appToken).0 == .unauthorized)
        }
    }

    /// The replica remembers a token it admitted a moment ago; the write asks the database again,
    /// so what changed since (collection stopped, the participant withdrew) stores nothing.
    @Test func aRememberedAdmissionStoresNothingOnceTheDatabaseSaysOtherwise() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            #expect(try await sage.post(h, SageArchiveFixture.archive(), appToken: appToken).0 == .created)

            try await h.sql("UPDATE studies SET collection_enabled = false WHERE study_key = \(SageArchiveFixture.study)")
            let (paused, reply) = try await sage.post(h, SageArchiveFixture.archive(), appToken: appToken)
            #expect(paused == .conflict, "\(reply)")
            #expect(reply.serialized(sortedKeys: true).contains("not collecting"))
            #expect(try await sage.count(h, "sage_archives") == 1)

            try await h.sql("UPDATE studies SET collection_enabled = true WHERE study_key = \(SageArchiveFixture.study)")
            #expect(try await sage.post(h, SageArchiveFixture.archive(), appToken: appToken).0 == .created)
            #expect(try await sage.count(h, "sage_archives") == 2)

            let (status, _, _) = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": appToken, "delete": "false"])
            #expect(status == .ok)
            #expect(try await sage.post(h, SageArchiveFixture.archive(), appToken: appToken).0 == .unauthorized)
            #expect(try await sage.count(h, "sage_archives") == 2)
            #expect(try await sage.count(h, "responses") == 2)
        }
    }
}
