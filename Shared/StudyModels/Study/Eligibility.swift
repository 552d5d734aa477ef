/// How a participant qualifies: an enrollment token, a yes/no test, or both.
public struct Eligibility: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case token, test, combined
    }

    public var type: Kind
    /// The prompt above the token field.
    public var tokenTitle: LocalizedText?
    public var instructionText: LocalizedText?
    /// Shown when the test is failed.
    public var failureText: LocalizedText?
    /// The yes/no questions of the test (`test` and `combined`).
    public var questions: [EligibilityQuestion]

    public init(
        type: Kind, tokenTitle: LocalizedText? = nil, instructionText: LocalizedText? = nil,
        failureText: LocalizedText? = nil, questions: [EligibilityQuestion] = []
    ) {
        self.type = type
        self.tokenTitle = tokenTitle
        self.instructionText = instructionText
        self.failureText = failureText
        self.questions = questions
    }

    enum CodingKeys: String, CodingKey { case type, tokenTitle, instructionText, failureText, questions }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decode(Kind.self, forKey: .type)
        tokenTitle = try c.decodeIfPresent(LocalizedText.self, forKey: .tokenTitle)
        instructionText = try c.decodeIfPresent(LocalizedText.self, forKey: .instructionText)
        failureText = try c.decodeIfPresent(LocalizedText.self, forKey: .failureText)
        questions = try c.decodeIfPresent([EligibilityQuestion].self, forKey: .questions) ?? []
    }
}

/// A yes/no eligibility question and the answer that passes.
public struct EligibilityQuestion: Codable, Sendable, Equatable {
    public var key: String
    public var text: LocalizedText
    /// `true` when "Yes" passes, `false` when "No" passes.
    public var passingAnswer: Bool

    public init(key: String, text: LocalizedText, passingAnswer: Bool) {
        self.key = key
        self.text = text
        self.passingAnswer = passingAnswer
    }
}
