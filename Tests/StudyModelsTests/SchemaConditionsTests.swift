import StudyModels
import Testing

/// The server's assignment of schema conditions: balanced within every block, the same each time
/// it is computed, and different from study to study.
@Suite struct SchemaConditionsTests {
    static let conditions = ["Control", "Treatment", "Waitlist"]

    static func assigned(_ study: String, count: Int, method: SchemaConditions.Method = .block) -> [String] {
        (0..<count).compactMap {
            SchemaConditions.assign(conditions: conditions, method: method, studyKey: study, participantId: "P\($0)", ordinal: $0)
        }
    }

    @Test func everyBlockHoldsEachConditionTwice() throws {
        let arms = Self.assigned("SLEEP", count: 60)
        try #require(arms.count == 60)
        for block in 0..<10 {
            let members = arms[(block * 6)..<(block * 6 + 6)]
            for condition in Self.conditions {
                #expect(members.filter { $0 == condition }.count == 2, "block \(block): \(Array(members))")
            }
        }
        // Blocks are shuffled, not the same order each time.
        let orders: [[String]] = (0..<10).map { block in Array(arms[(block * 6)..<(block * 6 + 6)]) }
        #expect(Set(orders).count > 1)
    }

    @Test func anAssignmentIsTheSameWhenComputedAgainAndDiffersBetweenStudies() {
        #expect(Self.assigned("SLEEP", count: 30) == Self.assigned("SLEEP", count: 30))
        #expect(Self.assigned("SLEEP", count: 30) != Self.assigned("MOOD", count: 30))
        #expect(SchemaConditions.seed(studyKey: "SLEEP", participantId: "ABC2345") == SchemaConditions.seed(studyKey: "SLEEP", participantId: "ABC2345"))
        #expect(SchemaConditions.seed(studyKey: "SLEEP", participantId: "ABC2345") != SchemaConditions.seed(studyKey: "SLEEP", participantId: "ABC2346"))
    }

    @Test func simpleDrawsAreUniformAndAStudyWithoutConditionsAssignsNone() throws {
        let arms = Self.assigned("SLEEP", count: 3000, method: .simple)
        try #require(arms.count == 3000)
        for condition in Self.conditions {
            let share = arms.filter { $0 == condition }.count
            #expect((900...1100).contains(share), "\(condition): \(share) of 3000")
        }
        #expect(SchemaConditions.assign(conditions: [], method: .block, studyKey: "S", participantId: "P", ordinal: 0) == nil)
    }
}
