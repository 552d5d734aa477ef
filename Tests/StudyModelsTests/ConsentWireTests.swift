import Foundation
import StudyModels
import Testing

/// `eligibilityConsent`'s consent as the apps read it. The iOS app casts `comprehension` and
/// `sharing` to dictionaries without checking, so a study without either sends empty objects
/// (found by the fuzzing run, on a study built in the console without a sharing screen).
@Suite struct ConsentWireTests {
    typealias Reply = EligibilityConsentReply

    static func consent(comprehension: Reply.Comprehension?, sharing: Reply.Sharing?) -> Reply.Consent {
        Reply.Consent(
            version: "1.0",
            visualScreens: [.init(type: "overview", title: "About", text: "What it is", description: "", html: "", url: "", visualStep: true)],
            comprehension: comprehension, sharing: sharing,
            review: .init(title: "", signatureTitle: "", reviewHTML: "", reasonForConsent: "", consentByLAR: false, additionalSignature: false, signatures: []))
    }

    @Test func aStudyWithoutComprehensionOrSharingSendsEmptyObjects() throws {
        let data = try JSONEncoder().encode(Self.consent(comprehension: nil, sharing: nil))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["comprehension"] as? [String: Any])?.isEmpty == true)
        #expect((object["sharing"] as? [String: Any])?.isEmpty == true)
        let decoded = try JSONDecoder().decode(Reply.Consent.self, from: data)
        #expect(decoded == Self.consent(comprehension: nil, sharing: nil))
    }

    @Test func presentOnesAreSentAndReadBack() throws {
        let consent = Self.consent(
            comprehension: .init(passScore: 1, questions: [], correctAnswers: [.init(key: "q", answer: ["yes"], evaluation: "any")]),
            sharing: .init(title: "Share", text: "t", shortDesc: "s", longDesc: "l", learnMore: "m", allowWithoutSharing: true))
        let data = try JSONEncoder().encode(consent)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["sharing"] as? [String: Any])?["title"] as? String == "Share")
        #expect(try JSONDecoder().decode(Reply.Consent.self, from: data) == consent)
    }
}
