import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import TestSupport

/// The study API as the apps call it (`/StudyMetaData`): their headers, a GET, and a service
/// with DEMOAPP and its studies published.
struct WCPApp: Sendable {
    let helper = MetadataAdmin()

    /// The app's headers for a platform's credential.
    static func headers(_ credential: String, android: Bool = false, language: String? = nil, appId: String = "DEMOAPP")
        -> HTTPFields
    {
        // Android's Base64 encoder ends with a newline; the iOS app's does not.
        let encoded = Data(credential.utf8).base64EncodedString() + (android ? "\n" : "")
        var fields: HTTPFields = [
            .authorization: "Basic \(encoded)", HTTPField.Name("applicationId")!: appId, HTTPField.Name("orgId")!: "DEMOORG",
        ]
        if let language { fields[HTTPField.Name("language")!] = language }
        return fields
    }

    func get(_ client: some TestClientProtocol, _ uri: String, _ headers: HTTPFields) async throws -> (HTTPResponse, [String: Any]) {
        try await client.execute(uri: uri, method: .get, headers: headers) { response in
            (response.head, (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:])
        }
    }

    /// Sets up DEMOAPP with SLEEPWELL (both platforms, launched) and IOSONLY (iOS, upcoming);
    /// runs `body` with the client, the admin token and the iOS and Android credentials.
    func withPublishedStudies(
        _ body: @escaping @Sendable (any TestClientProtocol, String, String, String) async throws -> Void
    ) async throws {
        try await helper.withService { client, root, _ in
            let (_, created) = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let credentials = (try JSONSerialization.jsonObject(with: Data(buffer: created)) as! [String: Any])["credentials"] as! [String: String]
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
            let iosOnly = example.replacingOccurrences(of: #""studyId": "SLEEPWELL""#, with: #""studyId": "IOSONLY""#)
                .replacingOccurrences(of: #""platforms": ["ios", "android"]"#, with: #""platforms": ["ios"]"#)
            _ = try await helper.send(client, .put, "/admin/v1/studies/IOSONLY/draft", token: root, body: iosOnly)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/IOSONLY/publish", token: root).0 == .ok)
            // A draft that was never published is invisible.
            let hidden = example.replacingOccurrences(of: #""studyId": "SLEEPWELL""#, with: #""studyId": "HIDDEN""#)
            _ = try await helper.send(client, .put, "/admin/v1/studies/HIDDEN/draft", token: root, body: hidden)
            try await body(client, root, credentials["ios"]!, credentials["android"]!)
        }
    }
}
