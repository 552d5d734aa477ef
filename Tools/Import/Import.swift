import ArgumentParser
import AsyncHTTPClient
import Foundation
import JSONText
import MoveIn
import NIOCore
import NIOHTTP1
import StudyModels

/// `studystack-import`: moving a MyStudies deployment in (docs/moving-in.md).
///
///     studystack-import studies read --from https://wcp.example.org/StudyMetaData \
///         --app-id MYAPP --org-id MYORG --out studies.json          # MYSTUDIES_APP_CREDENTIAL=bundleId:appToken
///     studystack-import studies plan studies.json --to http://127.0.0.1:8081 \
///         --app-id MYAPP --time-zone America/New_York                # STUDYSTACK_ADMIN_TOKEN=...
///     studystack-import studies apply studies.json ...               # the same, for real
///
/// Secrets come from the environment, never from the command line (which `ps` shows).
@main
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "studystack-import",
        abstract: "Move studies, participants and responses in from a MyStudies deployment.",
        subcommands: [Studies.self, Participants.self, Responses.self])
}

struct Studies: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The studies, from the study-metadata API the deployment serves its apps.",
        subcommands: [Read.self, Plan.self, Apply.self])
}

/// Reads every study of an app from the source's study-metadata API into one file.
struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read the app's studies from the source (GETs only) into an export file.",
        discussion: "The app's credential (bundleId:appToken, as the apps are built with it) is read from MYSTUDIES_APP_CREDENTIAL.")

    @Option(help: "The study-metadata address the apps use (…/StudyMetaData).") var from: String
    @Option(help: "The app's id at the source (applicationId).") var appId: String
    @Option(help: "The app's organisation id at the source (orgId).") var orgId: String
    @Option(name: .customLong("study"), help: "Only this study (repeat for more); every listed study when absent.") var studies: [String] = []
    @Option(name: .customLong("activity-version"), help: "STUDY/ACTIVITY=VERSION: also read this version of an activity (repeat).")
    var activityVersions: [String] = []
    @Option(help: "Where to write the export.") var out: String

    func run() async throws {
        guard let credential = ProcessInfo.processInfo.environment["MYSTUDIES_APP_CREDENTIAL"],
            let credentials = MyStudiesAPIReader.Credentials(credential: credential, appId: appId, orgId: orgId)
        else { throw ValidationError("set MYSTUDIES_APP_CREDENTIAL to the app's bundleId:appToken") }
        guard let base = URL(string: from), let scheme = base.scheme, ["http", "https"].contains(scheme) else {
            throw ValidationError("--from must be an http:// or https:// address")
        }
        var extra: [String: [String]] = [:]
        for text in activityVersions {
            let halves = text.split(separator: "=", maxSplits: 1).map(String.init)
            let path = halves.first?.split(separator: "/", maxSplits: 1).map(String.init) ?? []
            guard halves.count == 2, path.count == 2 else { throw ValidationError("--activity-version is STUDY/ACTIVITY=VERSION: \(text)") }
            extra[path[0], default: []].append(halves[1])
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let reader = MyStudiesAPIReader(base: base, credentials: credentials, client: client)
            let export = try await reader.read(studyIds: studies.isEmpty ? nil : studies, extraVersions: extra)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(export).write(to: URL(fileURLWithPath: out), options: .atomic)
            let designs = export.studies.map { $0.activities.filter { $0.reply != nil }.count }.reduce(0, +)
            print("read \(export.studies.count) studies and \(designs) activity designs from \(from) into \(out)")
            try await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

/// The options `plan` and `apply` share: where the export goes.
struct Destination: ParsableArguments {
    @Argument(help: "The export `read` wrote.") var export: String
    @Option(help: "The study-metadata service's address here.") var to: String
    @Option(help: "The app here the studies go into.") var appId: String
    @Option(help: "The IANA zone the source's schedules were written in (its server's zone).") var timeZone: String
    @Flag(help: "Print the report as JSON.") var json = false

    func send(dryRun: Bool) async throws {
        guard let token = ProcessInfo.processInfo.environment["STUDYSTACK_ADMIN_TOKEN"], !token.isEmpty else {
            throw ValidationError("set STUDYSTACK_ADMIN_TOKEN to a super-admin's token (POST /admin/v1/login)")
        }
        let body = try Data(contentsOf: URL(fileURLWithPath: export))
        var components = URLComponents(string: to)
        components?.path = "/admin/v1/apps/\(appId)/move-in/studies"
        components?.queryItems = [.init(name: "timeZone", value: timeZone), .init(name: "dryRun", value: dryRun ? "true" : "false")]
        guard let url = components?.url else { throw ValidationError("--to is not an address: \(to)") }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let reply: (NIOHTTP1.HTTPResponseStatus, Data)
        do {
            let response = try await client.execute(request, timeout: .minutes(30))
            reply = (response.status, Data(try await response.body.collect(upTo: 64 * 1024 * 1024).readableBytesView))
            try await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw error
        }
        guard reply.0 == .ok else {
            throw ValidationError("\(url.absoluteString) answered \(reply.0.code): \(String(decoding: reply.1, as: UTF8.self))")
        }
        if json {
            FileHandle.standardOutput.write(reply.1)
            print()
            return
        }
        let report = try JSONDecoder().decode(StudyMoveInReport.self, from: reply.1)
        print(MoveInReportText.render(report))
    }
}

struct Plan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The dry run: what the import will create, what cannot come over and why. Changes nothing.",
        discussion: "A super-admin's token is read from STUDYSTACK_ADMIN_TOKEN.")
    @OptionGroup var destination: Destination
    func run() async throws { try await destination.send(dryRun: true) }
}

struct Apply: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The import. Run it again after an interruption: it goes on where it stopped, and changes nothing once done.",
        discussion: "A super-admin's token is read from STUDYSTACK_ADMIN_TOKEN.")
    @OptionGroup var destination: Destination
    func run() async throws { try await destination.send(dryRun: false) }
}
