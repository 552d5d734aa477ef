import FHIR
import Foundation
import JSONText
import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import Testing
import TestSupport

/// Forwarding to a FHIR server (docs/fhir.md, Forwarding): each processed response one
/// transaction Bundle, which a FHIR server of this machine validates with fhir.resources and
/// fhirpathpy before taking it; the participant's Patient and each questionnaire version made
/// there once, a response sent again changing nothing, a server that is down tried again.
@Suite struct FHIRForwardingTests {
    let forwarding = ForwardingFixture()

    static let naming = FHIRNaming(base: "https://studies.example.org/fhir/r4")

    @Test(.needsCluster, .needsToolsPython) func eachResponseIsOneValidTransactionThatTheServerTakesOnce() async throws {
        let server = try FHIRTestServer()
        defer { server.stop() }
        let overrides = ForwardingFixture.localTargets.merging(["fhir.publicURL": Self.naming.base]) { $1 }
        try await ResponseHarness.run(overrides: overrides) { h in
            let (first, _) = try await forwarding.enroll(h)
            let (second, _) = try await forwarding.enroll(h)
            try await forwarding.store(h).save(
                .basic(url: URL(string: server.base)!, username: server.username, password: server.password), format: .fhir,
                studyKey: ForwardingFixture.study, actor: "test")
            let processing = ProcessingFixture()
            var sent: [Int64] = []
            // The LabKey server's own test responses: two versions of a survey, an active task,
            // and a choice with free text.
            let submitted = [
                (first, "NewSurvey", "1"), (first, "NewSurvey", "2"), (second, "NewSurvey", "1"), (second, "TOH-75", "1.0"),
                (first, "OtherOption", "1"),
            ]
            for (token, activity, version) in submitted {
                let id = try await processing.submit(h, appToken: token, activity: activity, version: version)
                #expect(try await forwarding.forwarded(h, id) == 0, "\(activity) \(version): response \(id)")
                sent.append(id)
            }
            #expect(Set(sent).count == 5)

            let state = try await server.state()
            #expect(state["failures"]?.array?.isEmpty == true, "every Bundle valid: \(state["failures"] ?? .null)")
            #expect(state["transactions"]?.integer == 5)
            #expect(state["counts"]?["Patient"]?.integer == 2, "one Patient per participant")
            #expect(state["counts"]?["Questionnaire"]?.integer == 4, "one Questionnaire per version answered")
            #expect(state["counts"]?["QuestionnaireResponse"]?.integer == 5)
            #expect(state["matched"]?["Patient"]?.integer == 3, "each participant's later responses found their Patient")
            #expect(state["matched"]?["Questionnaire"] == nil, "a version the server took is not sent again")

            // Each response names its participant's Patient as the server made it, and the exact
            // questionnaire version, which the server holds.
            var participants: [(Int64, Int64)] = []
            for try await row in try await h.postgres.query(
                """
                SELECT r.id, p.number FROM responses r JOIN participants p ON p.id = r.participant_id
                WHERE r.id = ANY(\(sent)) ORDER BY r.id
                """, logger: Logger(label: "test")
            ).decode((Int64, Int64).self) { participants.append(row) }
            #expect(participants.count == 5)
            let naming = Self.naming
            for (id, participant) in participants {
                let found = try await server.search(
                    "QuestionnaireResponse?identifier=\(naming.responseSystem(studyId: ForwardingFixture.study))%7C\(id)")
                let entries = found["entry"]?.array ?? []
                #expect(entries.count == 1, "response \(id)")
                let response = try #require(entries.first?["resource"])
                let reference = try #require(response["subject"]?["reference"]?.string)
                let patients = try await server.search(
                    "Patient?identifier=\(naming.participantSystem(studyId: ForwardingFixture.study))%7C\(participant)")
                let patientId = try #require(patients["entry"]?.array?.first?["resource"]?["id"]?.string)
                #expect(reference == "Patient/\(patientId)", "response \(id) is its participant's")
                let canonical = try #require(response["questionnaire"]?.string).split(separator: "|").map(String.init)
                #expect(canonical.count == 2)
                let questionnaires = try await server.search("Questionnaire?url=\(canonical[0])&version=\(canonical[1])")
                #expect(questionnaires["entry"]?.array?.count == 1, "\(canonical)")
            }

            // Sent again, as when a worker dies between the server's answer and recording it:
            // the server finds the response it has, and holds no second one.
            try await h.sql(
                "UPDATE responses SET status = 'processed', forward_due_at = now(), forward_lease_until = NULL WHERE id = \(sent[0])")
            #expect(try await forwarding.forwarded(h, sent[0]) == 0)
            let again = try await server.state()
            #expect(again["transactions"]?.integer == 6)
            #expect(again["counts"]?["QuestionnaireResponse"]?.integer == 5)
            #expect(again["matched"]?["QuestionnaireResponse"]?.integer == 1)

            // A server that is down is tried again until it takes the response.
            try await server.failNext([503])
            let later = try await processing.submit(h, appToken: second, activity: "NewSurvey", version: "3")
            #expect(try await forwarding.forwarded(h, later) == 1)
            let last = try await server.state()
            #expect(last["counts"]?["QuestionnaireResponse"]?.integer == 6)
            #expect(last["counts"]?["Questionnaire"]?.integer == 5)
            #expect(last["failures"]?.array?.isEmpty == true)
        }
    }
}
