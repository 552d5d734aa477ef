/// The informed consent: visual screens, an optional comprehension test, the data-sharing
/// screen and the document the participant signs. Its version moves only when it changes.
public struct Consent: Codable, Sendable, Equatable {
    public var visualScreens: [ConsentScreen]
    public var comprehension: Comprehension?
    public var sharing: SharingScreen?
    public var review: ConsentReview
    /// The consent version the apps see and participants sign, when the admin gives one (a study
    /// moved from another deployment keeps its consent's version); absent, numbered. Like the
    /// study's label, one that an earlier consent had continues its sequence when the consent changes.
    public var versionLabel: String?

    public init(
        visualScreens: [ConsentScreen] = [], comprehension: Comprehension? = nil, sharing: SharingScreen? = nil,
        review: ConsentReview = ConsentReview()
    ) {
        self.visualScreens = visualScreens
        self.comprehension = comprehension
        self.sharing = sharing
        self.review = review
    }

    enum CodingKeys: String, CodingKey { case visualScreens, comprehension, sharing, review, versionLabel }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        visualScreens = try c.decodeIfPresent([ConsentScreen].self, forKey: .visualScreens) ?? []
        comprehension = try c.decodeIfPresent(Comprehension.self, forKey: .comprehension)
        sharing = try c.decodeIfPresent(SharingScreen.self, forKey: .sharing)
        review = try c.decodeIfPresent(ConsentReview.self, forKey: .review) ?? ConsentReview()
        versionLabel = try c.decodeIfPresent(String.self, forKey: .versionLabel)
    }
}

/// One visual consent section: one of ResearchKit's eight standard kinds, or custom.
public struct ConsentScreen: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case overview, dataGathering, privacy, dataUse, timeCommitment, studySurvey, studyTasks, withdrawing, custom
    }

    public var type: Kind
    public var title: LocalizedText
    /// The brief summary on the screen.
    public var text: LocalizedText
    /// The "learn more" text; also what goes into the signed document.
    public var description: LocalizedText?
    /// HTML of the "learn more" page, when richer than `description`.
    public var html: LocalizedText?
    public var url: String?
    /// Shown as a screen; false: only part of the document. Absent means true.
    public var visualStep: Bool?

    public init(
        type: Kind, title: LocalizedText, text: LocalizedText, description: LocalizedText? = nil,
        html: LocalizedText? = nil, url: String? = nil, visualStep: Bool? = nil
    ) {
        self.type = type
        self.title = title
        self.text = text
        self.description = description
        self.html = html
        self.url = url
        self.visualStep = visualStep
    }
}

/// A test of the participant's understanding before they sign.
public struct Comprehension: Codable, Sendable, Equatable {
    /// Correct answers needed to pass.
    public var passScore: Int
    public var questions: [ComprehensionQuestion]

    public init(passScore: Int, questions: [ComprehensionQuestion]) {
        self.passScore = passScore
        self.questions = questions
    }
}

public struct ComprehensionQuestion: Codable, Sendable, Equatable {
    public enum Evaluation: String, Codable, Sendable {
        /// Any one of the correct answers passes.
        case any
        /// All the correct answers, and only them, must be chosen.
        case all
    }

    public var key: String
    public var text: LocalizedText
    public var choices: [TextChoice]
    /// Absent means single.
    public var selectionStyle: SelectionStyle?
    /// Values of the correct choices.
    public var correctAnswers: [String]
    /// Absent means any.
    public var evaluation: Evaluation?

    public init(
        key: String, text: LocalizedText, choices: [TextChoice], selectionStyle: SelectionStyle? = nil,
        correctAnswers: [String], evaluation: Evaluation? = nil
    ) {
        self.key = key
        self.text = text
        self.choices = choices
        self.selectionStyle = selectionStyle
        self.correctAnswers = correctAnswers
        self.evaluation = evaluation
    }
}

/// Asks whether the participant's data may be shared with qualified researchers.
public struct SharingScreen: Codable, Sendable, Equatable {
    public var title: LocalizedText
    public var text: LocalizedText
    public var shortDesc: LocalizedText
    public var longDesc: LocalizedText
    public var learnMore: LocalizedText?
    /// The participant may continue after declining to share. Absent means true.
    public var allowWithoutSharing: Bool?

    public init(
        title: LocalizedText, text: LocalizedText, shortDesc: LocalizedText, longDesc: LocalizedText,
        learnMore: LocalizedText? = nil, allowWithoutSharing: Bool? = nil
    ) {
        self.title = title
        self.text = text
        self.shortDesc = shortDesc
        self.longDesc = longDesc
        self.learnMore = learnMore
        self.allowWithoutSharing = allowWithoutSharing
    }
}

/// The document the participant reviews and signs.
public struct ConsentReview: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// The consent document is `html`.
        case html
        /// The document is the visual screens' descriptions, concatenated.
        case sections
    }

    public var type: Kind
    public var html: LocalizedText?
    public var title: LocalizedText?
    public var signatureTitle: LocalizedText?
    public var reasonForConsent: LocalizedText?
    /// Consent may be given by a legally authorised representative.
    public var consentByLAR: Bool
    /// Extra signature lines (for example a witness).
    public var additionalSignature: Bool
    public var signatures: [LocalizedText]

    public init(
        type: Kind = .sections, html: LocalizedText? = nil, title: LocalizedText? = nil,
        signatureTitle: LocalizedText? = nil, reasonForConsent: LocalizedText? = nil, consentByLAR: Bool = false,
        additionalSignature: Bool = false, signatures: [LocalizedText] = []
    ) {
        self.type = type
        self.html = html
        self.title = title
        self.signatureTitle = signatureTitle
        self.reasonForConsent = reasonForConsent
        self.consentByLAR = consentByLAR
        self.additionalSignature = additionalSignature
        self.signatures = signatures
    }

    enum CodingKeys: String, CodingKey {
        case type, html, title, signatureTitle, reasonForConsent, consentByLAR, additionalSignature, signatures
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decodeIfPresent(Kind.self, forKey: .type) ?? .sections
        html = try c.decodeIfPresent(LocalizedText.self, forKey: .html)
        title = try c.decodeIfPresent(LocalizedText.self, forKey: .title)
        signatureTitle = try c.decodeIfPresent(LocalizedText.self, forKey: .signatureTitle)
        reasonForConsent = try c.decodeIfPresent(LocalizedText.self, forKey: .reasonForConsent)
        consentByLAR = try c.decodeIfPresent(Bool.self, forKey: .consentByLAR) ?? false
        additionalSignature = try c.decodeIfPresent(Bool.self, forKey: .additionalSignature) ?? false
        signatures = try c.decodeIfPresent([LocalizedText].self, forKey: .signatures) ?? []
    }
}
