import ArgumentParser
import AsyncHTTPClient
import Foundation
import JSONText
import MoveIn
import NIOCore
import StudyModels

/// `studystack-import responses`: the responses a MyStudies 2.x deployment stored, or a LabKey-era
/// response server's lists (docs/moving-in.md).
///
///     GOOGLE_OAUTH_ACCESS_TOKEN=$(gcloud auth print-access-token) \
///     studystack-import responses read --firestore-project PROJECT --study STUDY01 --out responses.jsonl
///     studystack-import responses read-labkey --lists STUDY01.lists.zip --participants Participant.tsv \
///         --response-metadata ResponseMetadata.tsv --studies studies.json --study STUDY01 --time-zone America/New_York --out responses.jsonl
struct Responses: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The responses, from the Cloud Firestore database or the FHIR stores a MyStudies 2.x response server keeps them in, or a LabKey-era server's lists.",
        subcommands: [ResponsesRead.self, ResponsesReadFHIR.self, ResponsesReadLabKey.self, ResponsesPlan.self, ResponsesApply.self])
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
        try await CloudResponseRead.run(address: firestoreURL, option: "--firestore-url", studies: studies, out: out) { base, token, client in
            MyStudiesFirestoreReader(base: base, project: firestoreProject, database: firestoreDatabase, accessToken: token, client: client)
        }
    }
}

struct ResponsesReadFHIR: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read-fhir",
        abstract: "Read the studies' responses from the Cloud Healthcare FHIR stores a MyStudies 2.x response server kept them in (GETs only) into a file of JSON lines, readable by its owner only.",
        discussion: """
            For a deployment whose response server had enableFhirApi set to fhir (or fhir&did) and discardFhirAfterDid false: \
            it then wrote each response to the FHIR store FHIR_<studyId> of the dataset <studyId>, not to Firestore. \
            An OAuth access token that may read the stores is read from GOOGLE_OAUTH_ACCESS_TOKEN (gcloud auth print-access-token).
            """)

    @Option(help: "The Google Cloud project of the deployment's Healthcare datasets (its data project).") var healthcareProject: String
    @Option(help: "The region of the datasets (the deployment's region, us-east1 say).") var location: String
    @Option(help: "The Healthcare API's REST address.") var healthcareURL = "https://healthcare.googleapis.com"
    @Option(name: .customLong("study"), help: "A study whose responses to read (repeat for more).") var studies: [String]
    @Option(help: "Where to write the responses, one JSON object a line.") var out: String

    func run() async throws {
        try await CloudResponseRead.run(address: healthcareURL, option: "--healthcare-url", studies: studies, out: out) { base, token, client in
            MyStudiesFHIRStoreReader(base: base, project: healthcareProject, location: location, accessToken: token, client: client)
        }
    }
}

/// What reading from Google Cloud (Firestore, the Healthcare API) shares: the access token from
/// the environment, the address checked, each study's responses into one private file of JSON
/// lines, and the counts said.
enum CloudResponseRead {
    static func run(
        address: String, option: String, studies: [String], out: String,
        reader: (URL, String, HTTPClient) -> any StoredResponseReader
    ) async throws {
        guard let token = ProcessInfo.processInfo.environment["GOOGLE_OAUTH_ACCESS_TOKEN"], !token.isEmpty else {
            throw ValidationError("set GOOGLE_OAUTH_ACCESS_TOKEN to an access token that may read them (gcloud auth print-access-token)")
        }
        guard !studies.isEmpty else { throw ValidationError("name at least one --study") }
        guard let base = URL(string: address), let scheme = base.scheme, ["http", "https"].contains(scheme) else {
            throw ValidationError("\(option) must be an http:// or https:// address")
        }
        let file = try JSONLinesWriter(path: out)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let source = reader(base, token, client)
            var counts: [String] = []
            for studyId in studies {
                let count = try await source.read(studyId: studyId) { response in try file.write(json: response.json) }
                counts.append("\(count) of \(studyId)")
            }
            try file.close()
            try await client.shutdown()
            print("read \(counts.joined(separator: ", ")) stored responses into \(out)")
        } catch {
            try? file.close()
            try? await client.shutdown()
            throw error
        }
    }
}

struct ResponsesReadLabKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read-labkey",
        abstract: "Rebuild a LabKey-era response server's responses from its exported lists into a file of JSON lines, readable by its owner only.",
        discussion: """
            Export from the study's LabKey folder: the list archive (Manage Lists, Export List Archive), and the mobileappstudy \
            schema's Participant and ResponseMetadata tables as TSV, with the folder's date-time format set to \
            yyyy-MM-dd HH:mm:ss.SSS first (docs/moving-in.md). The activities' steps come from the file `studies read` wrote.
            """)

    @Option(help: "The list archive (.lists.zip).") var lists: String
    @Option(help: "mobileappstudy.Participant exported as TSV.") var participants: String
    @Option(help: "mobileappstudy.ResponseMetadata exported as TSV.") var responseMetadata: String
    @Option(help: "The file `studystack-import studies read` wrote from the same deployment.") var studies: String
    @Option(help: "The study whose folder the lists are of.") var study: String
    @Option(help: "The LabKey server's time zone (IANA), in which it wrote every time.") var timeZone: String
    @Option(help: "Where to write the responses, one JSON object a line.") var out: String

    func run() throws {
        guard let zone = TimeZone(identifier: timeZone) else { throw ValidationError("--time-zone is not an IANA zone: \(timeZone)") }
        let export = try JSONDecoder().decode(MyStudiesStudyExport.self, from: try Data(contentsOf: URL(fileURLWithPath: studies)))
        guard let source = export.studies.first(where: { ScalarKey($0.studyId) == ScalarKey(study) }) else {
            throw ValidationError("\(studies) holds no study \(study)")
        }
        let lists = try LabKeyListReader.read(
            lists: URL(fileURLWithPath: lists), participants: URL(fileURLWithPath: participants), responseMetadata: URL(fileURLWithPath: responseMetadata))
        let outcome = LabKeyResponseRebuild(study: source, zone: zone).rebuild(lists)
        let file = try JSONLinesWriter(path: out)
        do {
            for response in outcome.responses { try file.write(json: response.json) }
            try file.close()
        } catch {
            try? file.close()
            throw error
        }
        print("\(study): \(outcome.rowsRead) responses in the activities' lists, \(outcome.responses.count) rebuilt into \(out)")
        for finding in outcome.findings { print("  \(finding.effect.heading): \(finding.at): \(finding.message)") }
    }
}

/// The options `plan` and `apply` share.
struct ResponseDestination: ParsableArguments {
    @Argument(help: "The file `responses read` wrote.") var responses: String
    @Option(help: "The response service's address here.") var to: String
    @Option(help: "The most responses sent in one request (at most 1,000).") var responsesPerRequest = 500
    @Flag(help: "Print the report as JSON.") var json = false

    /// One line: a response of a few thousand answers, with room.
    static let lineBudget = JSONValue.Budget(maxBytes: JSONLines.maxLineBytes, maxNodes: 1_000_000, maxDepth: 64)

    func send(dryRun: Bool) async throws {
        guard let token = ProcessInfo.processInfo.environment["STUDYSTACK_ADMIN_TOKEN"], !token.isEmpty else {
            throw ValidationError("set STUDYSTACK_ADMIN_TOKEN to a super-admin's token (POST /admin/v1/login)")
        }
        guard (1...MovedResponsesPart.maxResponses).contains(responsesPerRequest) else { throw ValidationError("--responses-per-request is 1 to 1000") }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var reports: [String: ResponseMoveInReport] = [:]
        var order: [String] = []
        do {
            var part: [MyStudiesStoredResponse] = []
            // Lines one at a time: the file may hold more responses than fit in memory at once.
            var lines = try JSONLines(path: responses).makeIterator()
            while let line = lines.next() {
                let response: MyStudiesStoredResponse
                do {
                    response = try MyStudiesStoredResponse(json: try JSONValue.parse(line, budget: Self.lineBudget))
                } catch {
                    throw ValidationError("\(responses), line \(lines.number): not a stored response: \(error)")
                }
                if let last = part.last, last.studyId != response.studyId || part.count >= responsesPerRequest {
                    try await post(part, dryRun: dryRun, token: token, client: client, into: &reports, order: &order)
                    part = []
                }
                part.append(response)
            }
            if let failure = lines.failure { throw ValidationError("\(responses): \(failure)") }
            if !part.isEmpty { try await post(part, dryRun: dryRun, token: token, client: client, into: &reports, order: &order) }
            try await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw error
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            FileHandle.standardOutput.write(try encoder.encode(order.compactMap { reports[$0] }))
            print()
            return
        }
        for studyId in order {
            guard let report = reports[studyId] else { continue }
            print("\(studyId): \(report.counts.sentence(dryRun: dryRun))")
            for finding in report.findings { print("  \(finding.effect.heading): \(finding.at): \(finding.message)") }
        }
    }

    private func post(
        _ part: [MyStudiesStoredResponse], dryRun: Bool, token: String, client: HTTPClient, into reports: inout [String: ResponseMoveInReport],
        order: inout [String]
    ) async throws {
        guard let studyId = part.first?.studyId else { return }
        var components = URLComponents(string: to)
        components?.path = "/admin/v1/studies/\(studyId)/move-in/responses"
        components?.queryItems = [.init(name: "dryRun", value: dryRun ? "true" : "false")]
        guard let url = components?.url else { throw ValidationError("--to is not an address: \(to)") }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: MovedResponsesPart(source: responses, responses: part).json.serialized()))
        let response = try await client.execute(request, timeout: .minutes(10))
        let body = Data(try await response.body.collect(upTo: 64 * 1024 * 1024).readableBytesView)
        guard response.status == .ok else {
            throw ValidationError("\(url.absoluteString) answered \(response.status.code): \(String(decoding: body, as: UTF8.self))")
        }
        let report = try JSONDecoder().decode(ResponseMoveInReport.self, from: body)
        if let earlier = reports[studyId] { reports[studyId] = earlier.adding(report) } else {
            reports[studyId] = report
            order.append(studyId)
        }
    }
}

struct ResponsesPlan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan", abstract: "The dry run: what the import will store, and what cannot come over and why. Changes nothing.",
        discussion: "A super-admin's token is read from STUDYSTACK_ADMIN_TOKEN.")
    @OptionGroup var destination: ResponseDestination
    func run() async throws { try await destination.send(dryRun: true) }
}

struct ResponsesApply: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "The import. Run it again after an interruption: it stores what is not here yet, and changes nothing once done.",
        discussion: "A super-admin's token is read from STUDYSTACK_ADMIN_TOKEN.")
    @OptionGroup var destination: ResponseDestination
    func run() async throws { try await destination.send(dryRun: false) }
}
