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
            #expect((document["consent"] as? [String: Any])?["version"] as? String == "1.0")
            #expect((document["consent"] as? [String: Any])?["type"] as? String == "text/html")

            // A consent update: a new consent version; text becomes HTML safely; the old one stays readable.
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            let edited = example.replacingOccurrences(
                of: "We collect your answers.", with: "We collect your answers <securely> & privately.")
            #expect(try await api.helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: edited).0 == .ok)
            #expect(try await api.helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates?reconsent=true", token: root).0 == .ok)
            let (_, updated) = try await api.get(client, "/StudyMetaData/consentDocument?studyId=SLEEPWELL", WCPApp.headers(ios))
            let content = try #require((updated["consent"] as? [String: Any])?["content"] as? String)
            #expect((updated["consent"] as? [String: Any])?["version"] as? String == "1.1")
            #expect(content.contains("We collect your answers &lt;securely&gt; &amp; privately."))
            let (_, original) = try await api.get(
                client, "/StudyMetaData/consentDocument?studyId=SLEEPWELL&consentVersion=1.0", WCPApp.headers(ios))
            #expect(((original["consent"] as? [String: Any])?["content"] as? String)?.contains("We collect your answers.") == true)
            let (_, updates) = try await api.get(client, "/StudyMetaData/studyUpdates?studyId=SLEEPWELL&studyVersion=1.0", WCPApp.headers(ios))
            #expect((updates["updates"] as? [String: Any])?["consent"] as? Bool == true)
        }
    }

    /// A study moved from another deployment keeps the study and consent versions its
    /// participants' apps hold; a later change continues each label's own sequence, so the apps
    /// see a new version and only a changed consent reads as one.
    @Test func versionLabelsAreKeptAndContinued() async throws {
        try await api.withPublishedStudies { client, root, ios, _ in
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            func publish(_ document: String, reconsent: Bool? = nil) async throws {
                #expect(try await api.helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: document).0 == .ok)
                let query = reconsent.map { "?reconsent=\($0)" } ?? ""
                #expect(try await api.helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates\(query)", token: root).0 == .ok)
            }
            func listed() async throws -> String? {
                let (_, list) = try await api.get(client, "/StudyMetaData/studyList", WCPApp.headers(ios))
                return (list["studies"] as? [[String: Any]])?.first { $0["studyId"] as? String == "SLEEPWELL" }?["studyVersion"] as? String
            }
            func consentVersion() async throws -> String? {
                let (_, reply) = try await api.get(client, "/StudyMetaData/eligibilityConsent?studyId=SLEEPWELL", WCPApp.headers(ios))
                return (reply["consent"] as? [String: Any])?["version"] as? String
            }
            func updates(from held: String) async throws -> (HTTPResponse.Status, [String: Any]) {
                let (response, reply) = try await api.get(
                    client, "/StudyMetaData/studyUpdates?studyId=SLEEPWELL&studyVersion=\(held)", WCPApp.headers(ios))
                return (response.status, reply["updates"] as? [String: Any] ?? [:])
            }

            // The labels an imported study carries, with a changed consent.
            let labelled = example
                .replacingOccurrences(of: "\"studyId\": \"SLEEPWELL\",", with: "\"studyId\": \"SLEEPWELL\", \"versionLabel\": \"2.3\",")
                .replacingOccurrences(of: "\"consent\": {", with: "\"consent\": {\"versionLabel\": \"1.4\",")
                .replacingOccurrences(of: "We collect your answers.", with: "We collect your answers, encrypted.")
            try await publish(labelled, reconsent: true)
            #expect(try await listed() == "2.3")
            #expect(try await consentVersion() == "1.4")
            let (_, sinceFirst) = try await updates(from: "1.0")
            #expect(sinceFirst["consent"] as? Bool == true)
            let (_, sinceCurrent) = try await updates(from: "2.3")
            #expect(sinceCurrent["consent"] as? Bool == false && sinceCurrent["info"] as? Bool == false)

            // The same labels with a new tagline: the study's label steps on, the consent's stays.
            try await publish(labelled.replacingOccurrences(of: "How does sleep shape your day?", with: "How does sleep shape your week?"))
            #expect(try await listed() == "2.4")
            #expect(try await consentVersion() == "1.4")
            let (_, afterTagline) = try await updates(from: "2.3")
            #expect(afterTagline["info"] as? Bool == true)
            #expect(afterTagline["consent"] as? Bool == false)

            // Labels given out of sequence: one an earlier version had is stepped past.
            try await publish(labelled
                .replacingOccurrences(of: "\"versionLabel\": \"2.3\"", with: "\"versionLabel\": \"1.0\"")
                .replacingOccurrences(of: "We collect your answers, encrypted.", with: "We collect your answers, encrypted at rest."),
                reconsent: false)
            #expect(try await listed() == "1.1")
            #expect(try await consentVersion() == "1.5")

            // Each consent version is read by its label; an unknown label is refused.
            let (_, kept) = try await api.get(
                client, "/StudyMetaData/consentDocument?studyId=SLEEPWELL&consentVersion=1.4", WCPApp.headers(ios))
            #expect((kept["consent"] as? [String: Any])?["version"] as? String == "1.4")
            #expect(((kept["consent"] as? [String: Any])?["content"] as? String)?.contains("We collect your answers, encrypted.") == true)
            let (_, original) = try await api.get(
                client, "/StudyMetaData/consentDocument?studyId=SLEEPWELL&consentVersion=1.0", WCPApp.headers(ios))
            #expect(((original["consent"] as? [String: Any])?["content"] as? String)?.contains("We collect your answers.") == true)
            let (unknown, _) = try await updates(from: "9.9")
            #expect(unknown != .ok)
            // A label no version may have is refused before anything is saved.
            let (refused, _) = try await api.helper.send(
                client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root,
                body: example.replacingOccurrences(of: "\"studyId\": \"SLEEPWELL\",", with: "\"studyId\": \"SLEEPWELL\", \"versionLabel\": \"2 3\","))
            #expect(refused == .unprocessableContent)
            #expect(try await listed() == "1.1")
        }
    }
}
