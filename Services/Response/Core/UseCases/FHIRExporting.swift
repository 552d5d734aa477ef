import FHIR
import Foundation
import JSONText
import NIOCore
import ServiceKit

/// The FHIR API's Bulk Data exports as the client sees them (docs/fhir.md, Bulk Data; the Bulk
/// Data Access IG v2): a kick-off that records the export and answers at once, a status that
/// says how far it is and then gives the manifest, its files, and cancelling. Only the client
/// that asked reaches an export; another client's, even of the same study, does not exist for it.
package struct FHIRExporting: Sendable {
    /// What an export can hold, and holds when `_type` does not say (of what the client's scopes
    /// read): the study's participants and everything in their compartment that this API serves,
    /// with the questionnaires and the study their responses refer to. A consent's signed PDF
    /// (`Binary`) is not in it: the Consent's attachment says where to read it.
    package static let types = [
        "Patient", "ResearchSubject", "QuestionnaireResponse", "Observation", "Consent", "Questionnaire", "ResearchStudy",
    ]
    package static let outputFormats = ["application/fhir+ndjson", "application/ndjson", "ndjson"]

    package let reading: FHIRReading
    package let exports: FHIRExportStore

    package init(reading: FHIRReading, exports: FHIRExportStore) {
        self.reading = reading
        self.exports = exports
    }

    private var naming: FHIRNaming { reading.naming }

    /// `Group/{id}/$export` names the study's group (its id is the study's); `Patient/$export`
    /// the patients the client may read, which are the same.
    package enum Level: Sendable {
        case group(String)
        case patient
    }

    /// Records an export and returns its status URL. `query` is the kick-off's query string's
    /// pairs; `requestURL` how the kick-off was asked (the manifest repeats it).
    package func kickOff(
        level: Level, query: [(name: String, value: String)], respondAsync: Bool, requestURL: String, bearer: String?
    ) async throws -> String {
        let grant = try await reading.grant(bearer: bearer)
        guard respondAsync else { throw FHIRRefusal.invalid("a Bulk Data kick-off needs the header Prefer: respond-async") }
        var types: [String]?
        var since: Date?
        var seen = Set<String>()
        for (name, value) in query {
            guard seen.insert(name).inserted else { throw FHIRRefusal.invalid("\(name) is given more than once") }
            switch name {
            case "_outputFormat":
                guard Self.outputFormats.contains(value) else {
                    throw FHIRRefusal.invalid("_outputFormat must be \(Self.outputFormats.joined(separator: ", "))")
                }
            case "_type":
                // Matched by Unicode scalars: a type is an identifier, not text to be normalised.
                let named = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                let known = named.compactMap { name in Self.types.first { $0.unicodeScalars.elementsEqual(name.unicodeScalars) } }
                guard !named.isEmpty, known.count == named.count else {
                    throw FHIRRefusal.invalid("_type takes \(Self.types.joined(separator: ", ")), comma-separated")
                }
                guard Set(known).count == known.count else { throw FHIRRefusal.invalid("_type names a type twice") }
                types = known
            case "_since":
                guard let instant = Self.instant(value) else {
                    throw FHIRRefusal.invalid("_since must be a FHIR instant with its zone, like 2026-03-01T00:00:00Z")
                }
                since = instant
            default:
                throw FHIRRefusal.invalid("\(name) is not supported by this server's $export; it takes _outputFormat, _type and _since")
            }
        }
        guard let study = try await reading.catalog.study(grant.studyKey) else { throw FHIRRefusal.notFound("Group") }
        if case .group(let id) = level {
            guard FHIRId.studyId(from: id).map({ StudyCatalog.key($0).unicodeScalars.elementsEqual(study.key.unicodeScalars) }) == true
            else { throw FHIRRefusal.notFound("Group/\(id)") }
        }
        // Types asked for by name must all be readable; without `_type`, the readable ones go.
        let exported = types ?? Self.types.filter(grant.scopes.mayRead)
        guard !exported.isEmpty else { throw FHIRRefusal.notInScope(Self.types.joined(separator: ", ")) }
        for type in exported where !grant.scopes.mayRead(type) { throw FHIRRefusal.notInScope(type) }
        guard let export = try await exports.create(
            clientId: grant.clientId, studyKey: study.key, requestURL: requestURL, types: exported, since: since,
            deidentified: grant.deidentified)
        else {
            throw FHIRRefusal.busy("this client has \(FHIRExportStore.maxUnfinishedPerClient) exports in progress; wait for one to finish or cancel one")
        }
        try await reading.audit.record(
            actor: "fhir-client:\(grant.clientId)", action: "fhir.export_requested", studyId: study.key,
            details: [
                "export": Self.text(export.id), "types": exported.joined(separator: ","), "since": since.map(FHIRJSON.instant) ?? "",
                "deidentified": String(grant.deidentified),
            ])
        return statusURL(export.id)
    }

    package func statusURL(_ id: UUID) -> String { "\(naming.base)/bulk-status/\(Self.text(id))" }
    package func fileURL(_ id: UUID, _ number: Int) -> String { "\(naming.base)/bulk-files/\(Self.text(id))/\(number)" }

    static func text(_ id: UUID) -> String { id.uuidString.lowercased() }

    /// An export's state as the status request answers it.
    package enum Status: Sendable {
        case inProgress(String)
        case complete(manifest: JSONValue, expiresAt: Date)
        case failed(String)
    }

    /// The export `id` of the token's client.
    private func export(_ id: String, bearer: String?) async throws -> (FHIRExportStore.Export, SMARTClientStore.Grant) {
        let grant = try await reading.grant(bearer: bearer)
        guard let uuid = UUID(uuidString: id), Self.text(uuid) == id.lowercased(),
            let export = try await exports.export(uuid, clientId: grant.clientId)
        else { throw FHIRRefusal.notFound("export \(id)") }
        return (export, grant)
    }

    package func status(id: String, bearer: String?) async throws -> Status {
        let (export, _) = try await export(id, bearer: bearer)
        switch export.status {
        case .queued: return .inProgress("queued")
        case .running: return .inProgress(export.progress ?? "started")
        case .failed: return .failed(export.error ?? "the export failed")
        case .complete:
            let files = try await exports.files(of: export.id)
            // Not a FHIR resource: the manifest keeps its empty arrays (the IG requires both).
            var manifest = JSONObject()
            manifest["transactionTime"] = .string(FHIRJSON.instant(export.transactionTime))
            manifest["request"] = .string(export.requestURL)
            manifest["requiresAccessToken"] = .bool(true)
            manifest["output"] = .array(files.map { file in
                FHIRJSON.object([
                    "type": .string(file.type), "url": .string(fileURL(export.id, file.number)), "count": FHIRJSON.integer(Int(file.resources)),
                ])
            })
            manifest["error"] = .array([])
            return .complete(manifest: .object(manifest), expiresAt: export.expiresAt)
        }
    }

    /// Cancels (and forgets) the token's client's export `id`, finished or not.
    package func cancel(id: String, bearer: String?) async throws {
        let (export, grant) = try await export(id, bearer: bearer)
        guard try await exports.cancel(export.id, clientId: grant.clientId) else { throw FHIRRefusal.notFound("export \(id)") }
        try await reading.audit.record(
            actor: "fhir-client:\(grant.clientId)", action: "fhir.export_cancelled", studyId: export.studyKey,
            details: ["export": Self.text(export.id)])
    }

    /// File `number` of the token's client's complete export `id`: what it holds, and how to read
    /// its chunks one at a time (nil past the last).
    package func file(id: String, number: String, bearer: String?) async throws
        -> (file: FHIRExportStore.File, chunk: @Sendable (Int) async throws -> ByteBuffer?)
    {
        let (export, grant) = try await export(id, bearer: bearer)
        guard export.status == .complete, let number = Int(number),
            let file = try await exports.files(of: export.id).first(where: { $0.number == number })
        else { throw FHIRRefusal.notFound("file \(number) of export \(id)") }
        try await reading.audit.record(
            actor: "fhir-client:\(grant.clientId)", action: "fhir.export_file_read", studyId: export.studyKey,
            details: ["export": Self.text(export.id), "type": file.type, "resources": String(file.resources)])
        let store = exports
        let exportId = export.id
        return (file, { chunk in try await store.chunk(of: exportId, file: number, chunk: chunk) })
    }

    /// A FHIR instant: a date-time with seconds and a zone.
    static func instant(_ text: String) -> Date? {
        guard text.utf8.count <= 40, text.contains("T") else { return nil }
        return (try? Date(text, strategy: .iso8601))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }
}
