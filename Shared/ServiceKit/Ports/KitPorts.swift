import Foundation

// The service kit's parts that use cases of every service take, as ports: the audit log and the
// counter of tries at a secret. `AuditLog` and `AttemptCounter` conform (writing to PostgreSQL);
// the tests' in-memory conformers stand in for them where a use case's rules are tested alone.

/// Where the audit events of state changes are written.
public protocol AuditTrail: Sendable {
    func record(actor: String, action: String, studyId: String?, studyVersion: Int?, details: [String: String]) async throws
}

extension AuditTrail {
    /// An event with only what is known: no study, no version, no details unless given.
    public func record(actor: String, action: String, studyId: String? = nil, details: [String: String] = [:]) async throws {
        try await record(actor: actor, action: action, studyId: studyId, studyVersion: nil, details: details)
    }
}

/// Tries at a subject's secret, counted before the secret is checked, so a burst of guesses sent
/// together is held to the policy's allowance.
public protocol SecretAttempts: Sendable {
    func begin(_ subject: String, policy: AttemptCounter.Policy) async throws -> AttemptCounter.Admission
    func succeeded(_ subject: String) async throws
    /// Until when `subject` is locked, if it is.
    func lockedUntil(_ subject: String) async throws -> Date?
}

extension AuditLog: AuditTrail {
    public func record(actor: String, action: String, studyId: String?, studyVersion: Int?, details: [String: String]) async throws {
        try await record(actor: actor, action: action, studyId: studyId, studyVersion: studyVersion, details: details, on: nil)
    }
}

extension AttemptCounter: SecretAttempts {
    public func begin(_ subject: String, policy: Policy) async throws -> Admission {
        try await begin(subject, policy: policy, on: nil)
    }

    public func succeeded(_ subject: String) async throws {
        try await succeeded(subject, on: nil)
    }
}
