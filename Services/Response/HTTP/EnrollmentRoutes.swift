import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `enroll`, `validateEnrollmentToken`, `resolveEnrollmentToken` (POST; parameters in the query
/// string or a JSON body), dispatched by `MobileAppRoutes`.
package struct EnrollmentRoutes: Sendable {
    package struct EnrollReply: Encodable {
        package struct Data: Encodable { var appToken: String }
        package var success = true
        package var data: Data
    }

    package struct ValidateReply: Encodable {
        package struct Property: Encodable {
            package var propertyId: String
            package var value: JSONValue
        }

        package var success = true
        package var preEnrollmentParticipantProperties: [Property]
    }

    package struct ResolveReply: Encodable {
        package var success = true
        package var studyId: String
    }

    package struct NotFoundReply: Encodable {
        package var success = false
        package var message: String
    }

    package let enrollment: Enrollment
    package let throttle: TokenGuessThrottle

    package init(enrollment: Enrollment, throttle: TokenGuessThrottle) {
        self.enrollment = enrollment
        self.throttle = throttle
    }

    package func request(_ call: LabKeyCall) -> Enrollment.Request {
        Enrollment.Request(
            studyId: call.string("studyId") ?? call.string("shortName"), token: call.string("token"),
            allowDataSharing: call.string("allowDataSharing"), language: call.language)
    }

    package func enroll(_ call: LabKeyCall) async throws -> Response {
        let request = request(call)
        try await throttle.admit(call, studyId: request.studyId)
        switch try await enrollment.enroll(request) {
        case .enrolled(let appToken):
            throttle.count([])
            return try LabKeyCall.reply(EnrollReply(data: .init(appToken: appToken)))
        case .refused(let problems):
            throttle.count(problems)
            throw LabKeyCall.invalid(problems)
        }
    }

    package func validate(_ call: LabKeyCall) async throws -> Response {
        let request = request(call)
        try await throttle.admit(call, studyId: request.studyId)
        switch try await enrollment.validate(request) {
        case .valid(let properties):
            throttle.count([])
            return try LabKeyCall.reply(
                ValidateReply(preEnrollmentParticipantProperties: properties.map { .init(propertyId: $0.propertyId, value: $0.value) }))
        case .refused(let problems):
            throttle.count(problems)
            throw LabKeyCall.invalid(problems)
        }
    }

    package func resolve(_ call: LabKeyCall) async throws -> Response {
        guard let token = EnrollmentToken.normalized(call.string("token")) else {
            throw LabKeyCall.invalid([.init(field: "token", message: "Token is required")])
        }
        try await throttle.admit(call, studyId: nil)
        switch try await enrollment.resolve(token) {
        case .invalid(let problem):
            throttle.count("invalid")
            throw LabKeyCall.invalid([problem])
        case .unknown:
            throttle.count("unknown")
            return try LabKeyCall.reply(NotFoundReply(message: "Token is not associated with a study ID"), status: .notFound)
        case .study(let studyId):
            throttle.count("known")
            return try LabKeyCall.reply(ResolveReply(studyId: studyId))
        }
    }
}

/// Enrollment tokens are the only secret between an anonymous caller and a study's
/// participants' pre-enrollment properties (and a place in the study): 9 letters, of which 8
/// random. The three calls that check one are limited per client address and per study, and every
/// check is counted by outcome in `/metrics` (`studystack_enrollment_token_checks_total`), so a
/// guessing run shows up as a rising `unknown` and `rate_limited`.
package struct TokenGuessThrottle: Sendable {
    package let rateLimiter: RateLimiter
    package let metrics: ServiceMetrics

    package init(rateLimiter: RateLimiter, metrics: ServiceMetrics) {
        self.rateLimiter = rateLimiter
        self.metrics = metrics
    }
    /// Checks per minute per study from all addresses together: a study enrolling in earnest
    /// stays far below, a distributed guessing run does not.
    package var perStudy: Int { rateLimiter.perMinute * 20 }

    package func admit(_ call: LabKeyCall, studyId: String?) async throws {
        guard try await rateLimiter.allow("enrollment.token", from: call.clientAddress) else {
            count("rate_limited")
            throw Self.refused
        }
        if let key = EnrollmentToken.normalized(studyId).map(StudyCatalog.key),
            !(try await rateLimiter.allow("enrollment.token.study", from: key, limit: perStudy))
        {
            count("rate_limited")
            throw Self.refused
        }
    }

    package static let refused = APIError.tooManyRequests("Too many enrollment token checks; try again in a minute.")

    /// Counts a check by the token problem it found, if any.
    package func count(_ problems: [LabKeyProblem]) {
        guard let problem = problems.first(where: { $0.field == "token" }) else {
            if problems.isEmpty { count("known") }
            return
        }
        switch problem.message {
        case let message where message.hasPrefix("Unknown token"): count("unknown")
        case let message where message.hasPrefix("Invalid token"): count("invalid")
        case "Token already in use": count("used")
        default: count("missing")
        }
    }

    package func count(_ outcome: String) {
        metrics.countWorkerOutcome(
            worker: "enrollment", event: "token_checks", outcome: outcome,
            help: "Enrollment token checks (enroll, validateEnrollmentToken, resolveEnrollmentToken) by outcome.")
    }
}
