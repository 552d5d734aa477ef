import Foundation

/// Participants' date properties, from the response service that holds them to registration,
/// which anchors schedules on them (`InternalCalls.propertyDates`). Each participant's dates are
/// all their date properties as of `asOf`, replacing what was sent before; a delivery older than
/// what registration holds changes nothing (the outbox does not keep order).
public struct PropertyDates: Codable, Sendable, Equatable {
    public struct Participant: Codable, Sendable, Equatable {
        /// SHA-256 (hex) of the participant id their app holds.
        public var participantTokenSHA256: String
        /// By property key, lowercased: `yyyy-MM-dd`.
        public var dates: [String: String]

        public init(participantTokenSHA256: String, dates: [String: String]) {
            self.participantTokenSHA256 = participantTokenSHA256
            self.dates = dates
        }
    }

    public var asOf: Date
    public var participants: [Participant]

    /// The most participants one message carries, and the most dates of one participant.
    public static let maxParticipants = 1_000
    public static let maxDates = 50

    public init(asOf: Date, participants: [Participant]) {
        self.asOf = asOf
        self.participants = participants
    }

    private enum CodingKeys: String, CodingKey { case asOf, participants }

    /// `asOf` keeps its fraction of a second: two uploads in one second are told apart.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        asOf = try PreciseInstants.decode(c, .asOf)
        participants = try c.decode([Participant].self, forKey: .participants)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try PreciseInstants.encode(asOf, &c, .asOf)
        try c.encode(participants, forKey: .participants)
    }

    /// Whether every part is within bounds and reads: hashes of 64 hex digits, keys of 1 to 100
    /// scalars, dates an anchor can take. A message that is not is refused whole.
    public var isWellFormed: Bool {
        participants.count <= Self.maxParticipants
            && participants.allSatisfy { participant in
                TokenHash.isWellFormed(participant.participantTokenSHA256)
                    && participant.dates.count <= Self.maxDates
                    && participant.dates.allSatisfy(ParticipantAnchors.isKeptDate)
            }
    }
}
