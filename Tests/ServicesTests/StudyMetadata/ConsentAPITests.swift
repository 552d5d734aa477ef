import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

/// `eligibilityConsent` and `consentDocument`: what a participant sees when joining.
@Suite(.needsCluster) struct ConsentAPITests {
    let api = WCPApp()

    @Test func eligibilityAndConsentAreServedByConsentVersion() async throws {
        try await api.withPublishedStudies { client, root, ios, _ in
            let (_, reply) = try await api.get(
                client, "/StudyMetaData/eligibilityConsent?studyId=SLEEPWELL", WCPApp.headers(ios, language: "es"))
            let eligibility = try #require(reply["eligibility"] as? [String: Any])
            #expect(eligibility["type"] as? String == "combined")
            #expect(eligibility["tokenTitle"] as? String == "Enter the enrollment token from your invitation")
            let test = try #require(eligibility["test"] as? [[String: Any]])
            #expect(test.map { $0["resultType"] as? String } == ["boolean", "boolean"])
            #expect(test[0]["title"] as? String == "¿Tiene 18 años o más?")
            let answers = try #require(eligibility["correctAnswers"] as? [[String: Any]])
            #expect(answers.map { $0["answer"] as? Bool } == [true, false])

            let consent = try #require(reply["consent"] as? [String: Any])
            #expect(consent["version"] as? String == "1.0")
            let screens = try #require(consent["visualScreens"] as? [[String: Any]])
            #expect(screens.count == 5)
            #expect(screens.last?["visualStep"] as? Bool == false)
            let comprehension = try #require(consent["comprehension"] as? [String: Any])
            #expect(comprehension["passScore"] as? Int == 1)
            #expect((comprehension["questions"] as? [[String: Any]])?.first?["resultType"] as? String == "textChoice")
            let correct = try #require((comprehension["correctAnswers"] as? [[String: Any]])?.first)
            #expect(correct["answer"] as? [String] == ["yes"])
            #expect(correct["evaluation"] as? String == "any")
            #expect((consent["sharing"] as? [String: Any])?["allowWithoutSharing"] as? Bool == true)
            let review = try #require(consent["review"] as? [String: Any])
            #expect(review["additionalSignature"] as? Bool == true)
            #expect(review["signatures"] as? [String] == ["Witness"])
            #expect((review["reviewHTML"] as? String)?.hasPrefix("<h2>Overview</h2><p>The full description") == true)

            let (_, document) = try await api.get(
                client, "/StudyMetaData/consentDocument?studyId=SLEEPWELL&consentVersion=", WCPApp.headers(ios))
            #expect((document["consent"] as? [String: String])?["version"] == "1.0")
            #expect((document["consent"] as? [String: String])?["type"] == "text/html")

            // A consent update: a new consent version; text becomes HTML safely; the old one stays readable.
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            let edited = example.replacingOccurrences(
                of: "We collect your answers.", with: "We collect your answers <securely> & privately.")
            #expect(try await api.helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: edited).0 == .ok)
            #expect(try await api.helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root).0 == .ok)
            let (_, updated) = try await api.get(client, "/StudyMetaData/consentDocument?studyId=SLEEPWELL", WCPApp.headers(ios))
            let content = try #require((updated["consent"] as? [String: String])?["content"])
            #expect((updated["consent"] as? [String: String])?["version"] == "1.1")
            #expect(content.contains("We collect your answers &lt;securely&gt; &amp; privately."))
            let (_, original) = try await api.get(
                client, "/StudyMetaData/consentDocument?studyId=SLEEPWELL&consentVersion=1.0", WCPApp.headers(ios))
            #expect((original["consent"] as? [String: String])?["content"]?.contains("We collect your answers.") == true)
            let (_, updates) = try await api.get(client, "/StudyMetaData/studyUpdates?studyId=SLEEPWELL&studyVersion=1.0", WCPApp.headers(ios))
            #expect((updates["updates"] as? [String: Any])?["consent"] as? Bool == true)
        }
    }
}
