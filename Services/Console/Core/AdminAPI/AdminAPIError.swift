import Foundation
import StudyModels

/// What an admin API answered instead of success, or why it could not be asked. The console
/// shows the message; `problems` (JSON Pointers into what was sent) go next to the fields.
package struct AdminAPIError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status, or nil when the service could not be reached or answered nonsense.
    package var status: Int?
    package var code: String
    package var message: String
    package var problems: [ValidationProblem]
    /// The service that could not be reached (`status` nil), by its executable's name.
    package var service: String?

    package init(status: Int?, code: String, message: String, problems: [ValidationProblem] = [], service: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.problems = problems
        self.service = service
    }

    package var description: String { "\(status.map(String.init) ?? "-") \(code): \(message)" }

    /// The token was refused: the session ended (signed out elsewhere, expired, revoked).
    package var endsSession: Bool { status == 401 }

    /// An admin API call's reply or refusal, for a page that handles some refusals itself or a
    /// part of a page that stands or falls on its own.
    package static func outcome<Value>(_ call: () async throws(AdminAPIError) -> Value) async -> Result<Value, AdminAPIError> {
        do {
            return .success(try await call())
        } catch {
            return .failure(error)
        }
    }

    static func unreachable(_ service: String, _ error: any Error) -> AdminAPIError {
        AdminAPIError(
            status: nil, code: "unavailable",
            message: "The console could not reach the \(service) service. Try again in a moment; if it goes on, the service's log says why.",
            service: service)
    }

    /// The admin API's error body: `{"error": {"code", "message", "problems"}}`.
    struct Body: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
            var problems: [ValidationProblem]?
        }

        var error: Detail
    }
}
