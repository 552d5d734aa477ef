/// The replies of internal calls that only acknowledge what they received (the calls themselves
/// are defined in `InternalCalls`).

/// A receiver applied the message, or had a newer one already (`applied` false).
public struct MessageApplied: Codable, Sendable, Equatable {
    public var applied: Bool
    public init(applied: Bool) { self.applied = applied }
}

/// Registration recorded a spent invitation token (false: it had already).
public struct EnrollmentRecorded: Codable, Sendable, Equatable {
    public var recorded: Bool
    public init(recorded: Bool) { self.recorded = recorded }
}

/// How many devices registration queued a batch of notifications for.
public struct NotificationsAccepted: Codable, Sendable, Equatable {
    public var devices: Int
    public init(devices: Int) { self.devices = devices }
}

/// How many participants' date properties registration kept.
public struct PropertyDatesKept: Codable, Sendable, Equatable {
    public var kept: Int
    public init(kept: Int) { self.kept = kept }
}

/// How many of a participant's counted weeks changed the response service's table.
public struct RunWeeksChanged: Codable, Sendable, Equatable {
    public var changed: Int
    public init(changed: Int) { self.changed = changed }
}

/// What registration removed when a study's test run ended: the testers' rows.
public struct TestRunRemoval: Codable, Sendable, Equatable {
    public var studyStates: Int
    public var activityStates: Int
    public var consents: Int
    public var invitations: Int

    public init(studyStates: Int, activityStates: Int, consents: Int, invitations: Int) {
        self.studyStates = studyStates
        self.activityStates = activityStates
        self.consents = consents
        self.invitations = invitations
    }
}
