import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// Helpers for driving a service application in tests.
public enum TestApplication {
    /// Polls `/readyz` until it answers 200 (migrations applied), failing after `timeout`.
    public static func waitUntilReady(_ client: some TestClientProtocol, timeout: Duration = .seconds(30)) async throws {
        try await eventually("/readyz answering 200", within: timeout, poll: .milliseconds(50)) {
            try await client.execute(uri: "/readyz", method: .get) { $0.status }
        } until: { $0 == .ok }
    }

    /// Signature headers for a request to `receiver`'s `path?query` signed as `caller` with `key`
    /// (by default the caller's pair key for `receiver`).
    public static func signedHeaders(
        caller: ServiceName, to receiver: ServiceName, key: String? = nil, method: HTTPRequest.Method, path: String,
        query: String? = nil, body: [UInt8] = [], timestamp: Date = Date(), nonce: String = RequestSignature.makeNonce()
    ) -> HTTPFields {
        let keyText = key ?? TestConfiguration.pairKey(caller, to: receiver)
        var fields = HTTPFields()
        for (name, value) in InternalClient.signatureHeaders(
            caller: caller.rawValue, key: SymmetricKeyBox(base64: keyText)!, method: method.rawValue, path: path,
            query: query, body: body, timestamp: timestamp, nonce: nonce)
        {
            fields[HTTPField.Name(name)!] = value
        }
        return fields
    }
}

extension ByteBuffer {
    /// Decodes the buffer as JSON.
    public func decodeJSON<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(buffer: self))
    }
}
