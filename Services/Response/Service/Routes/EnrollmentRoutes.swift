import Foundation
import Hummingbird
import ServiceKit
import StudyModels

/// `enroll`, `validateEnrollmentToken`, `resolveEnrollmentToken` (POST; parameters in the query
/// string or a JSON body), dispatched by `MobileAppRoutes` below.
struct EnrollmentRoutes: Sendable {
    struct EnrollReply: Encodable {
        struct Data: Encodable { var appToken: String }
        var success = true
        var data: Data
    }

    struct ValidateReply: Encodable {
        struct Property: Encodable {
            var propertyId: String
            var value: JSONValue
        }

        var success = true
        var preEnrollmentParticipantProperties: [Property]
    }

    struct ResolveReply: Encodable {
        var success = true
        var studyId: String
    }

    struct NotFoundReply: Encodable {
        var success = false
        var message: String
    }

    let enrollment: Enrollment
    let participants: ParticipantStore
    let properties: ParticipantPropertyStore
    let catalog: StudyCatalog
    let throttle: TokenGuessThrottle

    func request(_ call: LabKeyCall) -> Enrollment.Request {
        Enrollment.Request(
            studyId: call.string("studyId") ?? call.string("shortName"), token: call.string("token"),
            allowDataSharing: call.string("allowDataSharing"), language: call.language)
    }

    func enroll(_ call: LabKeyCall) async throws -> Response {
        let request = request(call)
        try await throttle.admit(call, studyId: request.studyId)
        let (study, problems) = try await enrollment.problems(request, enrolling: true)
        throttle.count(problems)
        guard problems.isEmpty, let study else { throw LabKeyCall.invalid(problems) }
        do {
            let appToken = try await participants.enroll(
                studyKey: study.key, token: EnrollmentToken.normalized(request.token),
                allowDataSharing: Enrollment.sharing(request.allowDataSharing),
                language: request.language)
            return try LabKeyCall.reply(EnrollReply(data: .init(appToken: appToken)))
        } catch is ParticipantStore.TokenTaken {
            // A concurrent enrollment spent the token between the checks and the insert.
            throw LabKeyCall.invalid([.init(field: "token", message: "Token already in use")])
        }
    }

    func validate(_ call: LabKeyCall) async throws -> Response {
        let request = request(call)
        try await throttle.admit(call, studyId: request.studyId)
        let (study, problems) = try await enrollment.problems(request, enrolling: false)
        throttle.count(problems)
        guard problems.isEmpty, let study else { throw LabKeyCall.invalid(problems) }
        // What the research team uploaded for this token before enrollment (none without a token).
        let values =
            if let token = EnrollmentToken.normalized(request.token) {
                try await properties.preEnrollment(token: token, studyKey: study.key)
            } else { [(String, JSONValue)]() }
        return try LabKeyCall.reply(
            ValidateReply(preEnrollmentParticipantProperties: values.map { .init(propertyId: $0.0, value: $0.1) }))
    }

    func resolve(_ call: LabKeyCall) async throws -> Response {
        guard let token = EnrollmentToken.normalized(call.string("token")) else {
            throw LabKeyCall.invalid([.init(field: "token", message: "Token is required")])
        }
        try await throttle.admit(call, studyId: nil)
        guard EnrollmentToken.isValid(token) else {
            throttle.count("invalid")
            throw LabKeyCall.invalid([.init(field: "token", message: "Invalid token: '\(token)'")])
        }
        guard let state = try await participants.tokenState(token), let study = try await catalog.study(state.studyKey) else {
            throttle.count("unknown")
            return try LabKeyCall.reply(NotFoundReply(message: "Token is not associated with a study ID"), status: .notFound)
        }
        throttle.count("known")
        return try LabKeyCall.reply(ResolveReply(studyId: study.studyId))
    }
}

/// Enrollment tokens are the only secret between an anonymous caller and a study's
/// participants' pre-enrollment properties (and a place in the study): 9 letters, of which 8
/// random. The three calls that check one are limited per client address and per study, and every
/// check is counted by outcome in `/metrics` (`studystack_enrollment_token_checks_total`), so a
/// guessing run shows up as a rising `unknown` and `rate_limited`.
struct TokenGuessThrottle: Sendable {
    let rateLimiter: RateLimiter
    let metrics: ServiceMetrics
    /// Checks per minute per study from all addresses together: a study enrolling in earnest
    /// stays far below, a distributed guessing run does not.
    var perStudy: Int { rateLimiter.perMinute * 20 }

    func admit(_ call: LabKeyCall, studyId: String?) async throws {
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

    static let refused = APIError.tooManyRequests("Too many enrollment token checks; try again in a minute.")

    /// Counts a check by the token problem it found, if any.
    func count(_ problems: [LabKeyProblem]) {
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

    func count(_ outcome: String) {
        metrics.countWorkerOutcome(
            worker: "enrollment", event: "token_checks", outcome: outcome,
            help: "Enrollment token checks (enroll, validateEnrollmentToken, resolveEnrollmentToken) by outcome.")
    }
}

/// The LabKey-style app API: one route per path segment, dispatched on the action name.
struct MobileAppRoutes {
    let enrollment: EnrollmentRoutes
    let responses: ResponseRoutes
    let queries: QueryRoutes

    /// The actions served, as the apps spell them (matched in any case).
    static let actions = [
        "enroll", "validateEnrollmentToken", "resolveEnrollmentToken", "processResponse", "withdrawFromStudy",
        "selectRows", "executeSQL",
    ]
    /// Those that change something or spend a secret answer only POST, as the original's
    /// mutating actions did; the two queries also answer GET.
    static let postOnly: Set<String> = [
        "enroll", "validateenrollmenttoken", "resolveenrollmenttoken", "processresponse", "withdrawfromstudy",
    ]

    func add(to router: Router<ServiceRequestContext>) {
        router.post(":call", use: handle)
        router.get(":call", use: handle)
    }

    @Sendable func handle(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        guard let action = LabKeyCall.action(in: try context.parameters.require("call")) else {
            throw APIError.notFound("no such path")
        }
        guard Self.actions.contains(where: { $0.lowercased() == action }) else {
            throw APIError(.notFound, code: "not_found", message: "Unknown action: \(action)")
        }
        if Self.postOnly.contains(action) && request.method != .post { throw LabKeyCall.postRequired }
        let call = try await LabKeyCall.read(request, context: context, action: action, addresses: enrollment.throttle.rateLimiter.addresses)
        switch action {
        case "enroll": return try await enrollment.enroll(call)
        case "validateenrollmenttoken": return try await enrollment.validate(call)
        case "resolveenrollmenttoken": return try await enrollment.resolve(call)
        case "processresponse": return try await responses.processResponse(call)
        case "selectrows": return try await queries.selectRows(call)
        case "executesql": return try await queries.executeSQL(call)
        default: return try await responses.withdraw(call)
        }
    }
}
