import Foundation
import HummingbirdTesting
import JSONText
import Testing
import TestSupport

/// The LabKey API for researchers, driven by LabKey's own Python client (`labkey` from PyPI, in
/// the test tools' environment) against the response service on a port, with API keys from
/// study-metadata.
@Suite(.needsCluster) struct ResponseLabKeyAPITests {
    let admin = ResponseAdmin()
    let metadataHelper = MetadataAdmin()

    /// What the `labkey` client makes of each container path with `key`: `who_am_i` (the email,
    /// or the error's status) and a write (its error's status).
    static let script = """
        import json, sys
        from labkey.api_wrapper import APIWrapper
        from labkey.exceptions import RequestError
        domain, key, containers = sys.argv[1], sys.argv[2], sys.argv[3:]

        def refusal(error):
            # A refusal of the CSRF fetch comes wrapped (ServerContextError) around the RequestError.
            inner = getattr(error, "exception", None) or error
            response = getattr(inner, "response", None)
            return (response.status_code if response is not None else None,
                    (getattr(inner, "server_exception", None) or {}).get("exception"))

        out = {}
        for container in containers:
            api = APIWrapper(domain, container, use_ssl=False, api_key=key)
            seen = {}
            try:
                me = api.security.who_am_i()
                seen["email"] = me.email
                seen["id"] = me.id
                seen["csrf"] = bool(me.CSRF)
            except RequestError as error:
                seen["whoami"], seen["exception"] = refusal(error)
            try:
                api.query.insert_rows("lists", "daily", [{"sleepQuality": 1}])
                seen["insert"] = 200
            except RequestError as error:
                seen["insert"] = refusal(error)[0]
            out[container] = seen
        print(json.dumps(out))
        """

    func run(port: Int, key: String, _ containers: String...) async throws -> JSONValue {
        let output = try await ExternalTool.runOffPool(
            ProcessInfo.processInfo.environment["STUDYSTACK_TEST_PYTHON"] ?? "python3",
            ["-c", Self.script, "127.0.0.1:\(port)", key] + containers)
        return try JSONDecoder().decode(JSONValue.self, from: Data(output.utf8))
    }

    func makeKey(_ metadata: some TestClientProtocol, token: String) async throws -> (id: String, key: String) {
        let (_, body) = try await metadataHelper.send(metadata, .post, "/admin/v1/api-keys", token: token, body: #"{"name": "scripts"}"#)
        let created = try JSONDecoder().decode(JSONValue.self, from: Data(buffer: body))
        return (try #require(created["id"]?.text), try #require(created["key"]?.text))
    }

    @Test func theLabKeyClientSignsInWithAKeyOfAnAdminWithARoleAndCannotWrite() async throws {
        try await admin.withServices(announce: false, live: true, beforeResponse: ResponseAdminTokenTests.launchSleepwell) {
            client, metadata, root, _ in
            try await eventually("SLEEPWELL known to the response service", within: .seconds(20)) {
                try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches", token: root).0
            } until: { $0 == .ok }
            let port = try #require(client.port)
            let (adminId, researcher) = try await metadataHelper.makeAdmin(metadata, root: root, email: "researcher@studystack.test")
            let (_, outsider) = try await metadataHelper.makeAdmin(metadata, root: root, email: "outsider@studystack.test")
            #expect(try await metadataHelper.send(
                metadata, .put, "/admin/v1/studies/SLEEPWELL/roles/\(adminId)", token: root, body: #"{"role": "viewer"}"#).0 == .ok)
            let key = try await makeKey(metadata, token: researcher)

            // Both container paths a deployment used; the study id in another case too.
            let seen = try await run(port: port, key: key.key, "SLEEPWELL", "DEMOORG/DEMOAPP/SLEEPWELL", "sleepwell", "NOSUCHSTUDY")
            for container in ["SLEEPWELL", "DEMOORG/DEMOAPP/SLEEPWELL", "sleepwell"] {
                #expect(seen[container]?["email"] == .string("researcher@studystack.test"), "\(container): \(seen)")
                #expect(seen[container]?["csrf"] == .bool(true))
                // The data is read-only: LabKey's permission error.
                #expect(seen[container]?["insert"] == .number(403))
            }
            #expect(seen["SLEEPWELL"]?["id"] == seen["sleepwell"]?["id"], "the same user id each time")
            #expect(seen["NOSUCHSTUDY"]?["whoami"] == .number(404))

            // An admin with no role on the study, and a revoked key, get nothing.
            let outsiderKey = try await makeKey(metadata, token: outsider)
            let refused = try await run(port: port, key: outsiderKey.key, "SLEEPWELL")
            #expect(refused["SLEEPWELL"]?["whoami"] == .number(403))
            #expect(refused["SLEEPWELL"]?["exception"] == .string("User does not have permission to perform this operation."))
            #expect(try await metadataHelper.send(metadata, .delete, "/admin/v1/api-keys/\(key.id)", token: researcher).0 == .noContent)
            #expect(try await run(port: port, key: key.key, "SLEEPWELL")["SLEEPWELL"]?["whoami"] == .number(401))
            #expect(try await run(port: port, key: "ssk_made-up", "SLEEPWELL")["SLEEPWELL"]?["whoami"] == .number(401))
        }
    }
}
