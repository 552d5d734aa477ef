import Foundation
import HTTPTypes
import Hummingbird
import InternalContracts
import Logging
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// Researchers' scripts sign in with the API keys study-metadata issues, sent as LabKey's client
/// libraries send them: an `apikey` header, or HTTP Basic with the user `apikey` and the key as
/// the password. Each request asks study-metadata whose the key is (its SHA-256, never the key),
/// so the admin's roles of that moment apply and a revoked key stops at once. Checks of one key
/// that arrive together are shared as `RemoteAdminAuthenticator`'s are: each still begins after
/// its request arrived.
public struct RemoteAPIKeyAuthenticator: Sendable {
    public let client: InternalClient
    private let checks: SharedQuestions<String, InternalAnswer<AdminIdentity>>

    public init(client: InternalClient) {
        self.client = client
        checks = SharedQuestions { keyHash, logger in
            try await client.call(InternalCalls.apiKeys, body: APIKeyQuery(keyHash: keyHash), logger: logger)
        }
    }

    /// The key a request carries, or nil.
    public static func key(in request: Request) -> String? {
        if let header = request.headers[.apiKey]?.trimmingCharacters(in: .whitespaces), !header.isEmpty {
            return header
        }
        guard let authorization = request.headers[.authorization], authorization.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(authorization.dropFirst("basic ".count)).trimmingCharacters(in: .whitespaces)),
            let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":"),
            pair[..<colon].lowercased() == "apikey"
        else { return nil }
        let key = String(pair[pair.index(after: colon)...])
        return key.isEmpty ? nil : key
    }

    public func authenticate(_ request: Request, logger: Logger) async throws -> AdminIdentity {
        guard let key = Self.key(in: request), key.utf8.count <= 200 else {
            throw APIError.unauthenticated("send an API key (made on the console's API keys page) as the apikey header")
        }
        let answer: InternalAnswer<AdminIdentity>
        do {
            answer = try await checks.answer(SecureToken.hash(key), logger: logger)
        } catch {
            logger.warning("study-metadata could not check an API key", metadata: ["error": "\(error)"])
            throw APIError.unavailable("API keys cannot be checked now; try again")
        }
        switch answer {
        case .answered(let identity): return identity
        case .refused: throw APIError.unauthenticated("the API key is unknown, expired or revoked")
        }
    }
}
