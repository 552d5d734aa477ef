/// Which condition (arm) a participant of a schema study follows, decided by the server: the
/// schema app draws one on the phone and never says which, so the server assigns its own and
/// keeps it (docs/schema-protocols.md, Conditions). Deterministic from the study and the
/// participant, so an assignment can be recomputed and audited, and the same after a restart.
public enum SchemaConditions {
    public enum Method: String, Codable, Sendable, CaseIterable {
        /// Permuted blocks: each run of `blockSize` participants in enrolment order holds every
        /// condition equally often, so the arms stay balanced however many enrol.
        case block
        /// Uniform, independent for each participant (what the app does).
        case simple
    }

    /// Each condition this many times per block unless told otherwise: blocks of twice the number
    /// of conditions, so the next assignment is not given away by the previous ones.
    public static let defaultRepeatsPerBlock = 2

    /// The condition of the participant who enrolled `ordinal`-th (from 0) in the study; nil when
    /// the study has no conditions.
    public static func assign(
        conditions: [String], method: Method, studyKey: String, participantId: String, ordinal: Int,
        repeatsPerBlock: Int = defaultRepeatsPerBlock
    ) -> String? {
        guard !conditions.isEmpty else { return nil }
        switch method {
        case .simple:
            var stream = SplitMix64(seed: seed(studyKey: studyKey, participantId: participantId))
            return conditions[min(Int(stream.nextUnit() * Double(conditions.count)), conditions.count - 1)]
        case .block:
            let size = conditions.count * max(repeatsPerBlock, 1)
            let block = ordinal / size
            var slots = Array(conditions.map { Array(repeating: $0, count: max(repeatsPerBlock, 1)) }.joined())
            var stream = SplitMix64(seed: mix(studyKey, "block \(block)"))
            // Fisher–Yates, from the last slot down.
            for index in stride(from: slots.count - 1, to: 0, by: -1) {
                let other = Int(stream.next() % UInt64(index + 1))
                slots.swapAt(index, other)
            }
            return slots[ordinal % size]
        }
    }

    /// A participant's seed for their task plan (`SchemaTaskPlan`) and simple draws.
    public static func seed(studyKey: String, participantId: String) -> UInt64 {
        mix(studyKey, "participant \(participantId)")
    }

    /// FNV-1a over both texts, then one SplitMix64 step to spread the bits. Not a secret: the
    /// point is that anyone with the study's records can recompute an assignment.
    static func mix(_ first: String, _ second: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in Array(first.utf8) + [0] + Array(second.utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        var stream = SplitMix64(seed: hash)
        return stream.next()
    }
}
