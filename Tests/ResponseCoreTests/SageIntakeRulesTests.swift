import Crypto
import Foundation
import InMemoryPorts
import JSONText
import Logging
import ResponseCore
import SageAssessments
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The Sage doors' rules, against in-memory stores: who may send, what is stored once, what is
/// kept when refused for its content (and only then), the upload handshake's checks, and the
/// service completing what a client put and never completed.
@Suite struct SageIntakeRulesTests {
    static let token = "sage-token"
    static let schemas = Result { try SageSchemaSet.bundled() }

    struct Parts {
        var responses = InMemoryResponses()
        var archives: InMemorySageArchives
        var refusals: InMemoryRefusedArchives
        var uploads = InMemoryUploads()
        var intake: SageArchiveIntake

        init(withdrawn: Bool = false, collecting: Bool = true) throws {
            responses.enrol(
                .init(id: 5, studyKey: "SLEEP", studyId: "Sleep", withdrawn: withdrawn, collectionEnabled: collecting),
                appToken: SageIntakeRulesTests.token)
            archives = InMemorySageArchives(participants: responses)
            refusals = InMemoryRefusedArchives(participants: responses)
            intake = SageArchiveIntake(
                responses: responses, archives: archives, refusals: refusals, schemas: try SageIntakeRulesTests.schemas.get(),
                maxArchiveBytes: 1 << 20)
        }

        var handshake: SageUploadHandshake { SageUploadHandshake(intake: intake, uploads: uploads, maxArchiveBytes: 1 << 20) }
    }

    static func md5(_ bytes: [UInt8]) -> String { Data(Insecure.MD5.hash(data: bytes)).base64EncodedString() }

    @Test func anArchiveIsStoredOnceAndTheSameRunSentAgainAnswersTheSameArchive() async throws {
        let parts = try Parts()
        let sender = try await parts.intake.admit(appToken: Self.token, studyId: "sleep")
        let archive = SageArchiveSamples.archive(runId: "RUN-1")
        let first = try await parts.intake.receive(archive, contentMD5: Self.md5(archive), from: sender, door: .archives)
        let again = try await parts.intake.receive(archive, contentMD5: nil, from: sender, door: .archives)
        #expect(first.isNew && !again.isNew)
        #expect(first.archiveId == again.archiveId)
        #expect(parts.archives.stored.map(\.assessment) == ["sleep"])
        #expect(parts.refusals.kept.isEmpty)
    }

    @Test func onlyAParticipantOfTheStudyNamedStillTakingPartIsAdmitted() async throws {
        await #expect(throws: SageArchiveIntake.Failure.otherStudy) {
            try await Parts().intake.admit(appToken: Self.token, studyId: "OTHER")
        }
        await #expect(throws: SageArchiveIntake.Failure.unknownParticipant) {
            try await Parts().intake.admit(appToken: "nobody", studyId: nil)
        }
        await #expect(throws: SageArchiveIntake.Failure.unknownParticipant, "a token no phone holds is not looked up") {
            try await Parts().intake.admit(appToken: String(repeating: "x", count: 257), studyId: nil)
        }
        await #expect(throws: SageArchiveIntake.Failure.withdrawn) {
            try await Parts(withdrawn: true).intake.admit(appToken: Self.token, studyId: nil)
        }
        await #expect(throws: SageArchiveIntake.Failure.collectionDisabled(studyId: "Sleep")) {
            try await Parts(collecting: false).intake.admit(appToken: Self.token, studyId: nil)
        }
    }

    @Test func anArchiveThatCannotBeReadIsKeptWithWhyBeforeItIsRefused() async throws {
        let parts = try Parts()
        let sender = try await parts.intake.admit(appToken: Self.token, studyId: nil)
        let damaged = Array("PK not really a zip".utf8)
        for _ in 1...2 {
            await #expect {
                try await parts.intake.receive(damaged, contentMD5: nil, from: sender, door: .upload)
            } throws: { error in
                guard case .refused = error as? SageArchiveIntake.Failure else { return false }
                return true
            }
        }
        let kept = parts.refusals.kept
        try #require(kept.count == 1, "the same bytes refused twice are one item, counted twice")
        #expect(kept[0].content == damaged)
        #expect(kept[0].door == .upload)
        #expect(kept[0].timesRefused == 2)
        #expect(kept[0].reason.hasPrefix("The archive cannot be read"))
        #expect(parts.archives.stored.isEmpty)
    }

    @Test func damagedBytesOrAnUnknownSenderKeepNothing() async throws {
        let parts = try Parts()
        let sender = try await parts.intake.admit(appToken: Self.token, studyId: nil)
        let archive = SageArchiveSamples.archive()
        await #expect(throws: SageArchiveIntake.Failure.contentMD5Mismatch) {
            try await parts.intake.receive(archive, contentMD5: Self.md5(Array("other".utf8)), from: sender, door: .archives)
        }
        #expect(parts.refusals.kept.isEmpty)
        #expect(parts.archives.stored.isEmpty)
    }

    @Test func anArchiveOfNoActivityIsKeptAndStoredOnceReprocessedAfterTheStudyIsMended() async throws {
        let parts = try Parts()
        let sender = try await parts.intake.admit(appToken: Self.token, studyId: nil)
        parts.archives.answer(.noActivity)
        await #expect(throws: SageArchiveIntake.Failure.noActivity(assessment: "sleep", studyId: "Sleep")) {
            try await parts.intake.receive(SageArchiveSamples.archive(runId: "RUN-2"), contentMD5: nil, from: sender, door: .archives)
        }
        let kept = try #require(parts.refusals.kept.first)
        #expect(kept.reason == "Study Sleep has no published activity sleep, which the archive answers.")

        parts.archives.answer(nil)
        let reprocessed = try await parts.intake.reprocess(refusalId: kept.id, studyKey: "SLEEP", actor: "admin@example.org")
        guard case .stored(let archiveId) = reprocessed else {
            Issue.record("reprocessing answered \(String(describing: reprocessed))")
            return
        }
        #expect(parts.refusals.kept.first?.archiveId == archiveId)
        #expect(try await parts.intake.reprocess(refusalId: kept.id, studyKey: "SLEEP", actor: "admin@example.org")
            == .stored(archiveId: archiveId), "reprocessed again, it answers the archive it became")
        #expect(try await parts.intake.reprocess(refusalId: kept.id, studyKey: "OTHER", actor: "admin@example.org") == nil)
        #expect(parts.archives.stored.count == 1)
    }

    @Test func aKeptArchiveOfSomeoneWhoWithdrewIsNotStored() async throws {
        let parts = try Parts()
        let sender = try await parts.intake.admit(appToken: Self.token, studyId: nil)
        parts.archives.answer(.noActivity)
        _ = try? await parts.intake.receive(SageArchiveSamples.archive(), contentMD5: nil, from: sender, door: .archives)
        let kept = try #require(parts.refusals.kept.first)
        parts.archives.answer(nil)
        parts.responses.update(appToken: Self.token) { $0.withdrawn = true }
        let reprocessed = try await parts.intake.reprocess(refusalId: kept.id, studyKey: "SLEEP", actor: "admin@example.org")
        #expect(reprocessed == .notAdmitted(reason: "The participant has withdrawn from the study: nothing more is stored for them."))
        #expect(parts.archives.stored.isEmpty)
    }

    @Test func anUploadIsOpenedOnlyForWhatItDeclaresWithinBounds() async throws {
        let parts = try Parts()
        let participant = try await parts.intake.participant(appToken: Self.token, studyId: nil)
        let hash = SecureToken.hash(Self.token)
        func open(length: Int = 100, md5: String = Self.md5([1]), name: String = "archive.zip", metadata: JSONValue? = nil) async
            -> String
        {
            let declared = SageUploadHandshake.Declared(
                name: name, contentLength: length, contentMD5: md5, contentType: "application/zip", metadata: metadata)
            do {
                _ = try await parts.handshake.open(declared, for: participant, appTokenHash: hash)
                return "opened"
            } catch let refusal as SageUploadHandshake.Refusal {
                return "\(refusal)"
            } catch {
                return "unexpected \(error)"
            }
        }
        #expect(await open() == "opened")
        #expect(await open(length: 0).contains("contentLength"))
        #expect(await open(length: (1 << 20) + 1).contains("contentLength"))
        #expect(await open(md5: "not base64 of sixteen bytes").contains("contentMd5"))
        #expect(await open(name: "").contains("name"))
        #expect(await open(name: String(repeating: "n", count: 256)).contains("name"))
        #expect(await open(metadata: .string(String(repeating: "m", count: SageUploadHandshake.maxMetadataBytes))).contains("metadata"))
    }

    @Test func aPutFillsOnlyTheSessionItsURLNamesWithTheBytesDeclared() async throws {
        let parts = try Parts()
        let participant = try await parts.intake.participant(appToken: Self.token, studyId: nil)
        let archive = SageArchiveSamples.archive(runId: "RUN-3")
        let declared = SageUploadHandshake.Declared(
            name: "archive.zip", contentLength: archive.count, contentMD5: Self.md5(archive), contentType: "application/zip",
            metadata: nil)
        let handshake = parts.handshake
        let (id, secret, _) = try await handshake.open(declared, for: participant, appTokenHash: SecureToken.hash(Self.token))
        await #expect(throws: SageUploadHandshake.Refusal.noSuchUpload) {
            try await handshake.awaiting(uploadId: id.uuidString, secret: "wrong", contentMD5: Self.md5(archive), contentType: "application/zip")
        }
        await #expect(throws: SageUploadHandshake.Refusal.self, "a Content-MD5 other than the one declared") {
            try await handshake.awaiting(uploadId: id.uuidString, secret: secret, contentMD5: Self.md5([0]), contentType: "application/zip")
        }
        let session = try await handshake.awaiting(
            uploadId: id.uuidString, secret: secret, contentMD5: Self.md5(archive), contentType: "application/zip")
        await #expect(throws: SageUploadHandshake.Refusal.self, "bytes other than those declared") {
            try await handshake.put(Array(archive.dropLast()), into: session)
        }
        try await handshake.put(archive, into: session)
        let completed = try await handshake.complete(uploadId: id.uuidString, appToken: Self.token)
        guard case .succeeded(let archiveId) = completed else {
            Issue.record("completing answered \(completed)")
            return
        }
        #expect(try await handshake.complete(uploadId: id.uuidString, appToken: Self.token) == .succeeded(archiveId: archiveId))
        #expect(parts.archives.stored.count == 1)
        #expect(parts.uploads.item(id)?.session.content == nil, "the archive keeps the bytes; the session drops them")
    }

    @Test func theServiceCompletesWhatAClientPutAndDropsOnlyWhatNoOneMaySend() async throws {
        let parts = try Parts()
        let participant = try await parts.intake.participant(appToken: Self.token, studyId: nil)
        let handshake = parts.handshake
        var ids: [UUID] = []
        for run in ["RUN-4", "RUN-5"] {
            let archive = SageArchiveSamples.archive(runId: run)
            let declared = SageUploadHandshake.Declared(
                name: "archive.zip", contentLength: archive.count, contentMD5: Self.md5(archive), contentType: "application/zip",
                metadata: nil)
            let (id, secret, _) = try await handshake.open(declared, for: participant, appTokenHash: SecureToken.hash(Self.token))
            let session = try await handshake.awaiting(
                uploadId: id.uuidString, secret: secret, contentMD5: Self.md5(archive), contentType: "application/zip")
            try await handshake.put(archive, into: session)
            ids.append(id)
        }
        let completion = SageUploadCompletion(intake: parts.intake, uploads: parts.uploads, logger: Logger(label: "test"))
        #expect(try await completion.round() == 2)
        #expect(parts.archives.stored.count == 2)
        #expect(ids.allSatisfy { parts.uploads.item($0)?.session.archiveId != nil })
        #expect(try await completion.round() == 0, "nothing is left to complete")

        // A session whose participant withdrew since is closed, its bytes never stored.
        let archive = SageArchiveSamples.archive(runId: "RUN-6")
        let declared = SageUploadHandshake.Declared(
            name: "archive.zip", contentLength: archive.count, contentMD5: Self.md5(archive), contentType: "application/zip",
            metadata: nil)
        let (id, secret, _) = try await handshake.open(declared, for: participant, appTokenHash: SecureToken.hash(Self.token))
        try await handshake.put(
            archive,
            into: handshake.awaiting(uploadId: id.uuidString, secret: secret, contentMD5: Self.md5(archive), contentType: "application/zip"))
        parts.responses.update(appToken: Self.token) { $0.withdrawn = true }
        #expect(try await completion.round() == 1)
        #expect(parts.uploads.item(id)?.closed == .notAdmitted)
        #expect(parts.archives.stored.count == 2)
    }
}
