import CMSEnvelope
import Crypto
import ServiceKit
import Foundation
import JSONText
import SageAssessments
import StudyModels
import ZipArchive

/// One result archive from a Sage client, read as docs/sage.md (Result archives) describes:
/// opened first when it is sealed for the study's certificate, then read as a ZIP with every limit,
/// then as Sage's archive format, and made into what is stored: the archive itself, its files, and
/// a response of its assessment's activity whose answers wait in `sageAnswers` for processing.
package struct SageArchiveReception: Sendable {
    /// Why an archive is refused: a retry of the same bytes cannot succeed.
    package struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// The archive's file at fault ("" for the upload as a whole).
        package var file: String
        package var problems: [ValidationProblem]

        package init(file: String = "", _ message: String, pointer: String = "") {
            self.file = file
            problems = [ValidationProblem(pointer: pointer, message: message)]
        }

        init(_ refusal: ResultArchive.Refusal) {
            file = refusal.file
            problems = refusal.problems
        }

        package var description: String {
            problems.map { "\(file.isEmpty ? "the archive" : file)\($0.pointer.isEmpty ? "" : " \($0.pointer)"): \($0.message)" }
                .joined(separator: "; ")
        }
    }

    /// The archive's run id (`taskRunUUID`) when it has one, else `sha256:` and the SHA-256 of
    /// the archive: the same run sent again is the same key.
    package var idempotencyKey: String
    package var taskRunUUID: String?
    package var assessmentIdentifier: String
    /// SHA-256 (hex) of the ZIP as opened.
    package var sha256: String
    /// The ZIP as opened (sealed archives are kept open, like every response: the database and
    /// its backups are where the platform's data is protected).
    package var zip: [UInt8]
    package var sealed: Bool
    package var files: [SageArchiveFile]
    /// The response's metadata: `{"source": "sage", "archive": <metadata.json>, "unlisted": [...], ...}`.
    package var metadata: JSONValue
    /// The response's data: `{"sageAnswers": [...], "startTime", "endTime"}`.
    package var data: JSONValue

    package static func read(_ body: [UInt8], key: StudyKeyPair?, schemas: SageSchemaSet) throws(Refusal) -> SageArchiveReception {
        guard !body.isEmpty else { throw Refusal("the archive is empty") }
        var bytes = body
        var sealed = false
        if CMSEnvelope.looksEnveloped(body) {
            guard let key else {
                throw Refusal("the archive is sealed (CMS), but this study has no key pair: its certificate was never downloaded")
            }
            do {
                bytes = try CMSEnvelope.open(body, privateKeyDER: key.privateKeyDER, certificateDER: key.certificateDER)
            } catch {
                throw Refusal("the sealed archive cannot be opened: \(error.description)")
            }
            sealed = true
        }
        guard bytes.starts(with: [0x50, 0x4B]) else {
            throw Refusal("the archive is neither a ZIP archive nor CMS EnvelopedData sealed for this study")
        }
        let zip: ZipArchive
        do {
            zip = try ZipArchive(bytes, limits: ResultArchive.limits)
        } catch {
            throw Refusal("the ZIP archive cannot be read: \(error.reason)")
        }
        let archive: ResultArchive
        do {
            archive = try ResultArchive(zip, schemas: schemas)
        } catch {
            throw Refusal(error)
        }
        guard let assessment = archive.assessmentIdentifier, !assessment.isEmpty else {
            throw Refusal(file: "assessmentResult.json", "the archive names no assessment (assessmentIdentifier or identifier; info.json item)")
        }
        let sha256 = SHA256.hash(data: bytes).hexString
        let runId = archive.taskRunUUID.flatMap { $0.isEmpty || $0.utf8.count > 128 ? nil : $0 }
        // File names by scalars: a name listed in one normalisation is not the file of the other.
        let listed = Set((archive.metadata["files"]?.array ?? []).compactMap { $0["filename"]?.string.map { ScalarKey($0) } })
        let unexpected = Set(archive.unlisted.map { ScalarKey($0) })
        let files = archive.files.map {
            SageArchiveFile(
                name: $0.name, bytes: $0.bytes.count, listed: listed.contains(ScalarKey($0.name)),
                unexpected: unexpected.contains(ScalarKey($0.name)))
        }

        let result = archive.assessmentResult
        let steps = Self.timings(result)
        let answers = archive.answers.map { answer in
            SageAnswers.stored(
                (answer.path, answer.value, answer.answerType), start: steps[answer.path]?.start, end: steps[answer.path]?.end)
        }
        var data: JSONObject = [SageAnswers.member: .array(answers)]
        if let start = result?["startDate"]?.string { data["startTime"] = .string(start) }
        if let end = result?["endDate"]?.string { data["endTime"] = .string(end) }
        var metadata: JSONObject = [
            "source": .string("sage"), "archive": archive.metadata, "sealed": .bool(sealed),
            "files": .array(files.map { .object(["name": .string($0.name), "bytes": .number(Double($0.bytes))]) }),
        ]
        if !archive.unlisted.isEmpty { metadata["unlisted"] = .array(archive.unlisted.map(JSONValue.string)) }
        if let runId { metadata["taskRunUUID"] = .string(runId) }
        return SageArchiveReception(
            idempotencyKey: runId ?? "sha256:\(sha256)", taskRunUUID: runId, assessmentIdentifier: assessment, sha256: sha256,
            zip: bytes, sealed: sealed, files: files, metadata: .object(metadata), data: .object(data))
    }

    /// Each answered step's start and end, by path, from the result's step history.
    private static func timings(_ result: JSONValue?) -> [String: (start: String?, end: String?)] {
        var found: [String: (start: String?, end: String?)] = [:]
        func walk(_ results: [JSONValue], prefix: String) {
            for node in results {
                guard let identifier = node["identifier"]?.string else { continue }
                let path = prefix + identifier
                found[path] = (node["startDate"]?.string, node["endDate"]?.string)
                walk(node["stepHistory"]?.array ?? [], prefix: path + "/")
                walk(node["children"]?.array ?? [], prefix: path + "/")
            }
        }
        walk(result?["stepHistory"]?.array ?? [], prefix: "")
        return found
    }
}
