import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// The three services for invitations: study-metadata with SLEEPWELL published and a team of
/// admins; the response service (which makes and checks the tokens) and registration (which
/// invites and mails), each on a real port so they can call each other.
struct InvitationFixture: Sendable {
    let registration: RegistrationHarness
    let response: ResponseHarness
    let team: StudyMetadataFixture.Team

    static let study = "SLEEPWELL"

    static func run(_ body: @escaping @Sendable (InvitationFixture) async throws -> Void) async throws {
        let registrationPort = try SMTPTestServer.freePort()
        try await StudyMetadataFixture.run(studies: [study], team: true) { metadataURL, team in
            let team = try #require(team)
            try await ResponseHarness.run(
                overrides: ["studyMetadata.url": metadataURL, "registration.url": "http://127.0.0.1:\(registrationPort)"], live: true
            ) { response in
                // Enrolling; version 99 stays the newest whatever the start-up resync reads.
                let surgeryDate = try JSONDecoder().decode(
                    ParticipantProperty.self,
                    from: Data(#"{"key": "surgeryDate", "name": "Date of surgery", "timing": "preEnrollment", "dataType": "date", "useAsAnchor": true, "refresh": false}"#.utf8))
                #expect(try await response.studyEvent(study, version: 99, properties: [surgeryDate]) == .ok)
                try await RegistrationHarness.run(
                    overrides: [
                        "studyMetadata.url": metadataURL, "response.url": "http://127.0.0.1:\(response.client.port!)",
                    ],
                    peerPort: registrationPort
                ) { registration in
                    try await body(InvitationFixture(registration: registration, response: response, team: team))
                }
            }
        }
    }

    /// An admin call to registration; the body decoded as `T` when it is one.
    func admin<T: Decodable>(
        _ method: HTTPRequest.Method, _ path: String, token: String?, body: String? = nil, as type: T.Type = JSONValue.self
    ) async throws -> (status: HTTPResponse.Status, value: T?, text: String) {
        let reply = try await registration.admin(method, path, token: token, body: body)
        return (reply.status, try? JSONDecoder.iso8601.decode(T.self, from: reply.body), String(decoding: reply.body, as: UTF8.self))
    }

    /// A CSV import by the super-admin.
    func importCSV(_ csv: String, token: String? = nil) async throws -> (status: HTTPResponse.Status, value: InvitationImport?, text: String) {
        try await admin(.post, "/admin/v1/studies/\(Self.study)/invitations/import", token: token ?? team.root, body: csv, as: InvitationImport.self)
    }

    func createSite(_ name: String) async throws -> Site {
        let created = try await admin(
            .post, "/admin/v1/studies/\(Self.study)/sites", token: team.root, body: #"{"name": "\#(name)", "location": "Leeds"}"#,
            as: Site.self)
        #expect(created.status == .created, "\(created.text)")
        return try #require(created.value)
    }

    func sites() async throws -> SiteList {
        try #require(try await admin(.get, "/admin/v1/studies/\(Self.study)/sites", token: team.root, as: SiteList.self).value)
    }

    func invitations(_ query: String = "", token: String? = nil) async throws -> InvitationList {
        let reply = try await admin(.get, "/admin/v1/studies/\(Self.study)/invitations\(query)", token: token ?? team.root, as: InvitationList.self)
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require(reply.value)
    }

    /// The invitation e-mail to `recipient` (the newest after `after` of them): its text, the token
    /// it gives, and what its QR code image decodes to.
    func invitationMail(to recipient: String, after: Int = 0) async throws -> (text: String, token: String, qr: [String]) {
        let text = try await registration.mail(to: recipient, after: after)
        let eml = try #require(try registration.mails().last { $0.contains("To: \(recipient)\r\n") })
        let token = try #require(text.firstMatch(of: /enter ([A-Z]{9}) or scan/)?.1).description
        let image = try #require(eml.components(separatedBy: "Content-Type: image/png\r\n").dropFirst().first)
        let base64 = try #require(image.components(separatedBy: "\r\n\r\n").dropFirst().first?.components(separatedBy: "\r\n--").first)
        let png = try #require(Data(base64Encoded: base64.replacingOccurrences(of: "\r\n", with: "")))
        return (text, token, try ExternalTool.qrCodes(inImage: png))
    }

    /// Enrolls at the response service as the app does; the reply's `appToken`, or the exception.
    func enroll(token: String) async throws -> (appToken: String?, exception: String?) {
        let (_, reply, _) = try await response.call(
            "mobileappstudy-enroll.api", json: ["studyId": Self.study, "token": token, "allowDataSharing": "true"])
        return (reply["data"]?["appToken"]?.text, reply.exception)
    }

    func count(_ postgres: PostgresClient, _ query: PostgresQuery) async throws -> Int { try await postgres.count(query) }
}
