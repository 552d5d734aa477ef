import ArgumentParser
import AsyncHTTPClient
import Foundation
import MoveIn
import StudyModels

/// `studystack-import responses`: the responses a MyStudies 2.x deployment stored (docs/moving-in.md).
///
///     GOOGLE_OAUTH_ACCESS_TOKEN=$(gcloud auth print-access-token) \
///     studystack-import responses read --firestore-project PROJECT --study STUDY01 --out responses.jsonl
struct Responses: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The responses, from the Cloud Firestore database a MyStudies 2.x response server stores them in.",
        subcommands: [ResponsesRead.self])
}

struct ResponsesRead: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Read the studies' stored responses (GETs only) into a file of JSON lines, readable by its owner only.",
        discussion: "An OAuth access token that may read the Firestore database is read from GOOGLE_OAUTH_ACCESS_TOKEN (gcloud auth print-access-token).")

    @Option(help: "The Google Cloud project of the deployment's Firestore database (its data project).") var firestoreProject: String
    @Option(help: "The Firestore database.") var firestoreDatabase = "(default)"
    @Option(help: "Firestore's REST address.") var firestoreURL = "https://firestore.googleapis.com"
    @Option(name: .customLong("study"), help: "A study whose responses to read (repeat for more).") var studies: [String]
    @Option(help: "Where to write the responses, one JSON object a line.") var out: String

    func run() async throws {
        guard let token = ProcessInfo.processInfo.environment["GOOGLE_OAUTH_ACCESS_TOKEN"], !token.isEmpty else {
            throw ValidationError("set GOOGLE_OAUTH_ACCESS_TOKEN to an access token that may read the database (gcloud auth print-access-token)")
        }
        guard !studies.isEmpty else { throw ValidationError("name at least one --study") }
        guard let base = URL(string: firestoreURL), let scheme = base.scheme, ["http", "https"].contains(scheme) else {
            throw ValidationError("--firestore-url must be an http:// or https:// address")
        }
        // Personal data: created readable by its owner only, before a byte is written.
        guard FileManager.default.createFile(atPath: out, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw ValidationError("cannot create \(out)")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let reader = MyStudiesFirestoreReader(base: base, project: firestoreProject, database: firestoreDatabase, accessToken: token, client: client)
            var counts: [String] = []
            for studyId in studies {
                let count = try await reader.read(studyId: studyId) { response in
                    try handle.write(contentsOf: try encoder.encode(response) + Data("\n".utf8))
                }
                counts.append("\(count) of \(studyId)")
            }
            try handle.close()
            try await client.shutdown()
            print("read \(counts.joined(separator: ", ")) stored responses into \(out)")
        } catch {
            try? handle.close()
            try? await client.shutdown()
            throw error
        }
    }
}
