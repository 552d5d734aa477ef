import Foundation

/// Where a signed consent stands, as registration tells it from the participant's records.
public enum ConsentRecordState: String, Codable, Sendable, CaseIterable {
    /// Recorded as pending (the app had not finished it) and nothing after it ended it.
    case pending
    /// Completed, and neither a later completed consent nor a withdrawal ended it.
    case inForce
    /// A later completed consent of the same participant replaced it, or they withdrew.
    case ended
}

/// What the response service asks registration of a study's consent records (the FHIR API's
/// `Consent`): the records of participants whose app holds a participant id, in the order of
/// their ids, filtered as a FHIR search asks.
public struct ConsentRecordQuery: Codable, Sendable, Equatable {
    /// Bounds on when a record last changed (`changedAt`): each nil when absent. Kept to the
    /// fraction of a second, as the FHIR API shows them (`PreciseInstants`).
    public struct Changed: Codable, Sendable, Equatable {
        public var ge: Date?
        public var gt: Date?
        public var le: Date?
        public var lt: Date?

        public init(ge: Date? = nil, gt: Date? = nil, le: Date? = nil, lt: Date? = nil) {
            self.ge = ge
            self.gt = gt
            self.le = le
            self.lt = lt
        }

        private enum CodingKeys: String, CodingKey { case ge, gt, le, lt }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            ge = try PreciseInstants.decodeIfPresent(c, .ge)
            gt = try PreciseInstants.decodeIfPresent(c, .gt)
            le = try PreciseInstants.decodeIfPresent(c, .le)
            lt = try PreciseInstants.decodeIfPresent(c, .lt)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try PreciseInstants.encode(ge, &c, .ge)
            try PreciseInstants.encode(gt, &c, .gt)
            try PreciseInstants.encode(le, &c, .le)
            try PreciseInstants.encode(lt, &c, .lt)
        }
    }

    /// The most records a page asks for, and the most ids or participants a query names.
    public static let maxLimit = 1_001
    public static let maxListed = 1_000

    /// Only records with a larger id.
    public var after: Int64?
    /// At most this many records (1 to `maxLimit`).
    public var limit: Int
    public var ids: [Int64]?
    /// Only the records of these participants, by the SHA-256 of their app's participant id.
    public var participantTokenSHA256s: [String]?
    public var state: ConsentRecordState?
    public var changed: Changed?
    /// Count the records that match instead of listing them.
    public var counting: Bool

    public init(
        after: Int64? = nil, limit: Int, ids: [Int64]? = nil, participantTokenSHA256s: [String]? = nil,
        state: ConsentRecordState? = nil, changed: Changed? = nil, counting: Bool = false
    ) {
        self.after = after
        self.limit = limit
        self.ids = ids
        self.participantTokenSHA256s = participantTokenSHA256s
        self.state = state
        self.changed = changed
        self.counting = counting
    }

    public var isWellFormed: Bool {
        (1...Self.maxLimit).contains(limit) && (ids?.count ?? 0) <= Self.maxListed
            && (participantTokenSHA256s?.count ?? 0) <= Self.maxListed
            && (participantTokenSHA256s ?? []).allSatisfy(TokenHash.isWellFormed)
    }
}

/// One consent a participant signed (or began), as registration keeps it.
public struct ConsentRecord: Codable, Sendable, Equatable {
    /// Registration's id of the record: ascending in the order records were made.
    public var id: Int64
    /// SHA-256 (hex) of the participant id the participant's app holds.
    public var participantTokenSHA256: String
    /// The consent version signed.
    public var version: String
    public var state: ConsentRecordState
    /// Recorded as completed rather than pending: what it was before it ended.
    public var completed: Bool
    /// The eligibility the app reported with it, when it reported one.
    public var eligibility: Bool?
    /// The data-sharing choice in force when it was signed: `true`, `false`, `NA` (the study
    /// does not ask), or empty when none was ever given (a re-consent sends none: the earlier
    /// choice holds, and is the one given here).
    public var sharing: String
    public var signedAt: Date
    /// When a later completed consent or a withdrawal ended it.
    public var endedAt: Date?
    /// The signed PDF's SHA-256 (hex) and size, when one was uploaded.
    public var pdfSHA256: String?
    public var pdfBytes: Int?

    public init(
        id: Int64, participantTokenSHA256: String, version: String, state: ConsentRecordState, completed: Bool, eligibility: Bool?,
        sharing: String, signedAt: Date, endedAt: Date?, pdfSHA256: String?, pdfBytes: Int?
    ) {
        self.id = id
        self.participantTokenSHA256 = participantTokenSHA256
        self.version = version
        self.state = state
        self.completed = completed
        self.eligibility = eligibility
        self.sharing = sharing
        self.signedAt = signedAt
        self.endedAt = endedAt
        self.pdfSHA256 = pdfSHA256
        self.pdfBytes = pdfBytes
    }

    /// When it last changed: signed, or ended.
    public var changedAt: Date { max(signedAt, endedAt ?? signedAt) }

    private enum CodingKeys: String, CodingKey {
        case id, participantTokenSHA256, version, state, completed, eligibility, sharing, signedAt, endedAt, pdfSHA256, pdfBytes
    }

    /// The times keep their fraction of a second (`PreciseInstants`): a client that asks for
    /// what changed after one it was shown must not be given it again.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int64.self, forKey: .id)
        participantTokenSHA256 = try c.decode(String.self, forKey: .participantTokenSHA256)
        version = try c.decode(String.self, forKey: .version)
        state = try c.decode(ConsentRecordState.self, forKey: .state)
        // A registration from before this member was sent tells it by the state alone.
        completed = try c.decodeIfPresent(Bool.self, forKey: .completed) ?? (state != .pending)
        eligibility = try c.decodeIfPresent(Bool.self, forKey: .eligibility)
        sharing = try c.decode(String.self, forKey: .sharing)
        signedAt = try PreciseInstants.decode(c, .signedAt)
        endedAt = try PreciseInstants.decodeIfPresent(c, .endedAt)
        pdfSHA256 = try c.decodeIfPresent(String.self, forKey: .pdfSHA256)
        pdfBytes = try c.decodeIfPresent(Int.self, forKey: .pdfBytes)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(participantTokenSHA256, forKey: .participantTokenSHA256)
        try c.encode(version, forKey: .version)
        try c.encode(state, forKey: .state)
        try c.encode(completed, forKey: .completed)
        try c.encodeIfPresent(eligibility, forKey: .eligibility)
        try c.encode(sharing, forKey: .sharing)
        try PreciseInstants.encode(signedAt, &c, .signedAt)
        try PreciseInstants.encode(endedAt, &c, .endedAt)
        try c.encodeIfPresent(pdfSHA256, forKey: .pdfSHA256)
        try c.encodeIfPresent(pdfBytes, forKey: .pdfBytes)
    }
}

/// Registration's answer to a `ConsentRecordQuery`: the records, or their count.
public struct ConsentRecordPage: Codable, Sendable, Equatable {
    public var records: [ConsentRecord]
    public var count: Int?

    public init(records: [ConsentRecord], count: Int? = nil) {
        self.records = records
        self.count = count
    }
}
