/// Replies of `eligibilityConsent` and `consentDocument`.

public struct EligibilityConsentReply: Codable, Sendable, Equatable {
    public struct Eligibility: Codable, Sendable, Equatable {
        public struct Answer: Codable, Sendable, Equatable {
            public var key: String
            /// The answer that passes.
            public var answer: Bool

            public init(key: String, answer: Bool) {
                self.key = key
                self.answer = answer
            }
        }

        /// `token`, `test` or `combined`.
        public var type: String
        public var tokenTitle: String
        /// The test's yes/no questions, as boolean question steps.
        public var test: [ActivityStep]
        public var correctAnswers: [Answer]

        public init(type: String, tokenTitle: String, test: [ActivityStep], correctAnswers: [Answer]) {
            self.type = type
            self.tokenTitle = tokenTitle
            self.test = test
            self.correctAnswers = correctAnswers
        }
    }

    public struct VisualScreen: Codable, Sendable, Equatable {
        public var type: String
        public var title: String
        public var text: String
        public var description: String
        public var html: String
        public var url: String
        public var visualStep: Bool

        public init(type: String, title: String, text: String, description: String, html: String, url: String, visualStep: Bool) {
            self.type = type
            self.title = title
            self.text = text
            self.description = description
            self.html = html
            self.url = url
            self.visualStep = visualStep
        }
    }

    public struct Comprehension: Codable, Sendable, Equatable {
        public struct CorrectAnswer: Codable, Sendable, Equatable {
            public var key: String
            public var answer: [String]
            /// `any` or `all`.
            public var evaluation: String

            public init(key: String, answer: [String], evaluation: String) {
                self.key = key
                self.answer = answer
                self.evaluation = evaluation
            }
        }

        public var passScore: Int
        /// Text-choice question steps.
        public var questions: [ActivityStep]
        public var correctAnswers: [CorrectAnswer]

        public init(passScore: Int, questions: [ActivityStep], correctAnswers: [CorrectAnswer]) {
            self.passScore = passScore
            self.questions = questions
            self.correctAnswers = correctAnswers
        }
    }

    public struct Sharing: Codable, Sendable, Equatable {
        public var title: String
        public var text: String
        public var shortDesc: String
        public var longDesc: String
        public var learnMore: String
        public var allowWithoutSharing: Bool

        public init(title: String, text: String, shortDesc: String, longDesc: String, learnMore: String, allowWithoutSharing: Bool) {
            self.title = title
            self.text = text
            self.shortDesc = shortDesc
            self.longDesc = longDesc
            self.learnMore = learnMore
            self.allowWithoutSharing = allowWithoutSharing
        }
    }

    public struct Review: Codable, Sendable, Equatable {
        public var title: String
        public var signatureTitle: String
        public var reviewHTML: String
        public var reasonForConsent: String
        public var consentByLAR: Bool
        public var additionalSignature: Bool
        public var signatures: [String]

        public init(
            title: String, signatureTitle: String, reviewHTML: String, reasonForConsent: String, consentByLAR: Bool,
            additionalSignature: Bool, signatures: [String]
        ) {
            self.title = title
            self.signatureTitle = signatureTitle
            self.reviewHTML = reviewHTML
            self.reasonForConsent = reasonForConsent
            self.consentByLAR = consentByLAR
            self.additionalSignature = additionalSignature
            self.signatures = signatures
        }
    }

    public struct Consent: Codable, Sendable, Equatable {
        public var version: String
        public var visualScreens: [VisualScreen]
        public var comprehension: Comprehension?
        public var sharing: Sharing?
        public var review: Review

        public init(version: String, visualScreens: [VisualScreen], comprehension: Comprehension?, sharing: Sharing?, review: Review) {
            self.version = version
            self.visualScreens = visualScreens
            self.comprehension = comprehension
            self.sharing = sharing
            self.review = review
        }

        enum CodingKeys: String, CodingKey { case version, visualScreens, comprehension, sharing, review }

        /// A study without a comprehension test or a sharing screen still sends both, as empty
        /// objects: the iOS app reads them as dictionaries unchecked (a missing one crashes it),
        /// and skips an empty one.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(version, forKey: .version)
            try c.encode(visualScreens, forKey: .visualScreens)
            if let comprehension { try c.encode(comprehension, forKey: .comprehension) } else { try c.encode(Empty(), forKey: .comprehension) }
            if let sharing { try c.encode(sharing, forKey: .sharing) } else { try c.encode(Empty(), forKey: .sharing) }
            try c.encode(review, forKey: .review)
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            version = try c.decode(String.self, forKey: .version)
            visualScreens = try c.decode([VisualScreen].self, forKey: .visualScreens)
            comprehension = try Self.unlessEmpty(Comprehension.self, c, .comprehension)
            sharing = try Self.unlessEmpty(Sharing.self, c, .sharing)
            review = try c.decode(Review.self, forKey: .review)
        }

        static func unlessEmpty<T: Decodable>(_ type: T.Type, _ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> T? {
            guard c.contains(key), try c.decodeNil(forKey: key) == false else { return nil }
            if let object = try? c.nestedContainer(keyedBy: AnyKey.self, forKey: key), object.allKeys.isEmpty { return nil }
            return try c.decode(T.self, forKey: key)
        }

        struct Empty: Codable {}

        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }

    public var message = "SUCCESS"
    public var eligibility: Eligibility
    public var consent: Consent

    public init(eligibility: Eligibility, consent: Consent) {
        self.eligibility = eligibility
        self.consent = consent
    }
}

public struct ConsentDocumentReply: Codable, Sendable, Equatable {
    public struct Document: Codable, Sendable, Equatable {
        public var version: String
        public var type: String
        public var content: String
        /// Whether this consent version asks those who signed an earlier one to sign again
        /// (MyStudies 2.x's study datastore puts it here).
        public var enrollAgain: Bool

        public init(version: String, type: String, content: String, enrollAgain: Bool = false) {
            self.version = version
            self.type = type
            self.content = content
            self.enrollAgain = enrollAgain
        }
    }

    public var message = "SUCCESS"
    public var consent: Document
    /// The same again, where MyStudies 2.x's Android app reads it (`ConsentDocumentData`).
    public var enrollAgain: Bool

    public init(consent: Document) {
        self.consent = consent
        self.enrollAgain = consent.enrollAgain
    }
}
