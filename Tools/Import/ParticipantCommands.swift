import ArgumentParser
import AsyncHTTPClient
import Foundation
import MoveIn
import NIOCore
import NIOHTTP1
import StudyModels

/// `studystack-import participants`: one app's participants, from a MyStudies 2.x deployment's
/// MySQL databases (docs/moving-in.md).
///
///     studystack-import participants read --mysql-host 127.0.0.1 --mysql-user reader \
///         --app-id MYAPP --consent-files ./consent-bucket --out participants.json   # MYSTUDIES_MYSQL_PASSWORD=...
///     studystack-import participants plan participants.json --to http://127.0.0.1:8082 --app-id MYAPP
///     studystack-import participants apply participants.json ...                    # STUDYSTACK_ADMIN_TOKEN=...
struct Participants: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The participants, from the deployment's MySQL databases (MyStudies 2.x).",
        subcommands: [ParticipantsRead.self, ParticipantsPlan.self, ParticipantsApply.self])
}

struct ParticipantsRead: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Read the app's participants from the source's databases (SELECTs only) into an export file readable by its owner only.",
        discussion: "The MySQL password is read from MYSTUDIES_MYSQL_PASSWORD. Reach a Cloud SQL database through the Cloud SQL Auth Proxy.")

    @Option(help: "The MySQL server's address.") var mysqlHost = "127.0.0.1"
    @Option(help: "The MySQL server's port.") var mysqlPort = 3306
    @Option(help: "A Unix socket to connect through instead of TCP.") var mysqlSocket: String?
    @Option(help: "A MySQL user that may SELECT in the three databases.") var mysqlUser: String
    @Option(help: "The participant datastore's database.") var participantDatabase = MyStudiesDatabaseReader.Databases.release.participantDatastore
    @Option(help: "The auth server's database.") var authDatabase = MyStudiesDatabaseReader.Databases.release.authServer
    @Option(help: "The response datastore's database.") var responseDatabase = MyStudiesDatabaseReader.Databases.release.responseDatastore
    @Option(help: "The zone the services wrote their datetime values in (UTC on Google Cloud).") var databaseTimeZone = "UTC"
    @Option(help: "A local copy of the consent bucket (gsutil rsync), where the signed PDFs are.") var consentFiles: String?
    @Option(help: "The app's id at the source (app_info.custom_app_id).") var appId: String
    @Option(help: "Where to write the export.") var out: String

    func run() async throws {
        guard TimeZone(identifier: databaseTimeZone) != nil else { throw ValidationError("--database-time-zone must be an IANA zone") }
        let password = ProcessInfo.processInfo.environment["MYSTUDIES_MYSQL_PASSWORD"] ?? ""
        let reader = MyStudiesDatabaseReader(
            address: MariaDBAddress(host: mysqlHost, port: mysqlPort, socket: mysqlSocket, user: mysqlUser, password: password),
            databases: .init(participantDatastore: participantDatabase, authServer: authDatabase, responseDatastore: responseDatabase),
            consentFiles: consentFiles.map { URL(fileURLWithPath: $0, isDirectory: true) }, databaseTimeZone: databaseTimeZone)
        let export = try await reader.read(appId: appId)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(export)
        // Password hashes and personal data: created readable by its owner only, before a byte is written.
        guard FileManager.default.createFile(atPath: out, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw ValidationError("cannot create \(out)")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        try handle.write(contentsOf: data)
        try handle.close()
        print(
            "read \(export.accounts.count) accounts, \(export.enrolments.count) enrolments, \(export.consents.count) signatures "
                + "(\(export.consents.filter { $0.pdf != nil }.count) PDFs), \(export.activityStates.count) activity states, "
                + "\(export.sites.count) sites and \(export.invitations.count) invitations into \(out); \(export.findings.count) findings")
    }
}

/// The options `plan` and `apply` share.
struct ParticipantDestination: ParsableArguments {
    @Argument(help: "The export `participants read` wrote.") var export: String
    @Option(help: "The registration service's address here.") var to: String
    @Option(help: "The app here the participants go into.") var appId: String
    @Option(help: "The most accounts sent in one request.") var accountsPerRequest = 200
    @Option(help: "The most bytes of JSON sent in one request (below the service's body limit).") var bytesPerRequest = 6 * 1024 * 1024
    @Flag(help: "Print the report as JSON.") var json = false

    func send(dryRun: Bool) async throws {
        guard let token = ProcessInfo.processInfo.environment["STUDYSTACK_ADMIN_TOKEN"], !token.isEmpty else {
            throw ValidationError("set STUDYSTACK_ADMIN_TOKEN to a super-admin's token (POST /admin/v1/login)")
        }
        guard (1...500).contains(accountsPerRequest) else { throw ValidationError("--accounts-per-request is 1 to 500") }
        let whole = try JSONDecoder().decode(MyStudiesParticipantExport.self, from: Data(contentsOf: URL(fileURLWithPath: export)))
        var components = URLComponents(string: to)
        components?.path = "/admin/v1/apps/\(appId)/move-in/participants"
        components?.queryItems = [.init(name: "dryRun", value: dryRun ? "true" : "false")]
        guard let url = components?.url else { throw ValidationError("--to is not an address: \(to)") }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var report: ParticipantMoveInReport?
        do {
            for part in try whole.parts(maxAccounts: accountsPerRequest, maxBytes: bytesPerRequest) {
                var request = HTTPClientRequest(url: url.absoluteString)
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(part)))
                let response = try await client.execute(request, timeout: .minutes(30))
                let body = Data(try await response.body.collect(upTo: 64 * 1024 * 1024).readableBytesView)
                guard response.status == .ok else {
                    throw ValidationError("\(url.absoluteString) answered \(response.status.code): \(String(decoding: body, as: UTF8.self))")
                }
                let partReport = try JSONDecoder().decode(ParticipantMoveInReport.self, from: body)
                report = report.map { $0.adding(partReport) } ?? partReport
            }
            try await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw error
        }
        guard let report else { return }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            FileHandle.standardOutput.write(try encoder.encode(report))
            print()
        } else {
            print(MoveInReportText.render(report))
        }
    }
}

struct ParticipantsPlan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "The dry run: what the import will create, what cannot come over and why. Changes nothing.",
        discussion: "A super-admin's token is read from STUDYSTACK_ADMIN_TOKEN.")
    @OptionGroup var destination: ParticipantDestination
    func run() async throws { try await destination.send(dryRun: true) }
}

struct ParticipantsApply: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "The import. Run it again after an interruption: it goes on where it stopped, and changes nothing once done.",
        discussion: "A super-admin's token is read from STUDYSTACK_ADMIN_TOKEN.")
    @OptionGroup var destination: ParticipantDestination
    func run() async throws { try await destination.send(dryRun: false) }
}
