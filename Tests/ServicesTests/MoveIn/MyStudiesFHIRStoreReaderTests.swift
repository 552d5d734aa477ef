import AsyncHTTPClient
import Foundation
import JSONText
import MoveIn
import StudyModels
import Testing
import TestSupport

/// `MyStudiesFHIRStoreReader` against the Healthcare API's FHIR search (`FHIRStoreTestServer`):
/// the `QuestionnaireResponse` resources a MyStudies 2.x response server writes when it keeps
/// responses in a FHIR store, read back page by page as the responses the apps sent, as far as
/// that server kept them.
struct MyStudiesFHIRStoreReaderTests {
    static func json(_ text: String) throws -> JSONValue {
        try JSONValue.parse(Array(text.utf8), budget: .init(maxBytes: 1 << 20, maxNodes: 100_000))
    }

    /// A daily check-in as that server's `processToFhirResponse` writes one (its beans as Gson
    /// serialises them: empty lists kept, nulls left out), with the id and `meta` the store adds.
    static func daily(_ run: Int, participant: String = "pid-1", questionnaireVersion: String = "2") throws -> JSONValue {
        try json(#"""
            {"resourceType": "QuestionnaireResponse", "id": "qr-\#(run)", "meta": {"versionId": "MTc5MDc4\#(run)", "lastUpdated": "2026-10-0\#(run % 9 + 1)T16:00:00.123456+00:00"},
             "status": "completed",
             "item": [
               {"linkId": "sleepQuality", "text": "How well did you sleep?", "definition": "scale", "answer": [{"valueInteger": \#(run % 11)}], "item": []},
               {"linkId": "energy", "text": "Energy level", "definition": "continuousScale", "answer": [{"valueDecimal": 0.42}], "item": []},
               {"linkId": "caffeine", "text": "Any caffeine after 2 pm?", "definition": "boolean", "answer": [{"valueBoolean": false}], "item": []},
               {"linkId": "bedtime", "text": "When did you go to bed?", "definition": "timeOfDay", "answer": [{"valueTime": "22:30:00"}], "item": []},
               {"linkId": "lastAlcohol", "text": "When did you last drink alcohol?", "definition": "date", "answer": [{"valueDateTime": "2026-09-26T23:00:00.000Z"}], "item": []},
               {"linkId": "bedtimeLocal", "text": "Local", "definition": "date", "answer": [{"valueDateTime": "2026-09-26T19:00:00.000-04:00"}], "item": []},
               {"linkId": "activities", "text": "What did you do before bed?", "definition": "textChoice",
                "answer": [{"valueString": "read", "item": []}, {"valueString": "other", "item": []}, {"valueString": "a walk", "item": []}], "item": []},
               {"linkId": "notes", "text": "Anything else?", "definition": "text", "answer": [], "item": []},
               {"linkId": "symptoms", "text": "symptoms", "definition": "grouped", "answer": [], "item": [
                 {"linkId": "symptom", "text": "Symptom", "definition": "text", "answer": [{"valueString": "headache"}], "item": []},
                 {"linkId": "severity", "text": "Severity", "definition": "scale", "answer": [{"valueInteger": 2}], "item": []}]}
             ],
             "questionnaire": "/fhirStores/FHIR_STUDY01/fhir/Questionnaire/q-daily/_history/\#(questionnaireVersion)",
             "source": {"reference": "Patient/patient-1", "type": "Patient"},
             "authored": "2026-10-02T12:01:00.000+00:00",
             "identifier": {"use": "official", "type": {"text": "questionnaire"}, "value": "STUDY01@site-1@\#(participant)@daily@\#(run)"}}
            """#)
    }

    /// A kick count: a task's results are the items of its answer.
    static func kicks(_ run: Int) throws -> JSONValue {
        try json(#"""
            {"resourceType": "QuestionnaireResponse", "id": "qr-kicks-\#(run)", "meta": {"lastUpdated": "2026-10-03T19:05:00+00:00"}, "status": "completed",
             "item": [{"linkId": "counter", "text": "Kick counter", "definition": "fetalKickCounter", "item": [],
               "answer": [{"item": [
                 {"linkId": "duration", "text": "duration", "definition": "numeric", "answer": [{"valueInteger": 600}], "item": []},
                 {"linkId": "count", "text": "count", "definition": "numeric", "answer": [{"valueInteger": 12}], "item": []}]}]}],
             "questionnaire": "/fhirStores/FHIR_STUDY01/fhir/Questionnaire/q-kicks/_history/1",
             "identifier": {"use": "official", "type": {"text": "task"}, "value": "STUDY01@site-1@pid-2@kicks@\#(run)"}}
            """#)
    }

    static func questionnaire(_ id: String, _ versionId: String, version: String) throws -> JSONValue {
        try json(#"{"resourceType": "Questionnaire", "id": "\#(id)", "meta": {"versionId": "\#(versionId)"}, "version": "\#(version)", "status": "active"}"#)
    }

    static func server(nextBase: String? = nil) throws -> FHIRStoreTestServer {
        var responses = try (1...248).map { try daily($0, questionnaireVersion: $0 <= 100 ? "1" : "2") }
        responses.append(try kicks(1))
        // Written by hand, not by that server: its identifier names no participant.
        responses.append(try json(#"{"resourceType": "QuestionnaireResponse", "id": "odd", "identifier": {"value": "STUDY01"}, "item": []}"#))
        return try FHIRStoreTestServer(
            studies: ["STUDY01": (responses, [
                "q-daily/1": try questionnaire("q-daily", "1", version: "1.0"), "q-daily/2": try questionnaire("q-daily", "2", version: "1.1"),
                "q-kicks/1": try questionnaire("q-kicks", "1", version: "1.0"),
            ])],
            nextBase: nextBase)
    }

    static func reader(_ server: FHIRStoreTestServer, token: String? = nil) throws -> MyStudiesFHIRStoreReader {
        MyStudiesFHIRStoreReader(
            base: try #require(URL(string: server.base)), project: server.project, location: server.location, accessToken: token ?? server.token,
            client: HTTPClient.shared)
    }

    @Test func everyResponseIsReadPageByPageAsTheAppSentIt() async throws {
        let server = try Self.server()
        var read: [MyStudiesStoredResponse] = []
        let count = try await Self.reader(server).read(studyId: "STUDY01") { read.append($0) }
        #expect(count == 250)
        try #require(read.count == 250)
        // Three pages of a hundred, following each bundle's next link; each questionnaire version once.
        let requests = try await server.requests()
        #expect(requests.filter { $0.contains("/fhir/QuestionnaireResponse") }.count == 3)
        #expect(requests.filter { $0.contains("/fhir/Questionnaire/") }.sorted() == [
            "/v1/\(server.store(of: "STUDY01"))/fhir/Questionnaire/q-daily/_history/1",
            "/v1/\(server.store(of: "STUDY01"))/fhir/Questionnaire/q-daily/_history/2",
            "/v1/\(server.store(of: "STUDY01"))/fhir/Questionnaire/q-kicks/_history/1",
        ])

        let first = read[0]
        #expect(first.document == "projects/\(server.project)/locations/\(server.location)/datasets/STUDY01/fhirStores/FHIR_STUDY01/fhir/QuestionnaireResponse/qr-1")
        guard case .success(let app) = MyStudiesAppResponse.rebuild(first) else {
            Issue.record("the first response could not be rebuilt")
            return
        }
        #expect(app.participantId == "pid-1" && app.activityId == "daily" && app.runId == "1" && app.version == "1.0")
        #expect(app.receivedAt == Date(timeIntervalSince1970: 1_790_956_800.123))
        let results = app.data["results"]?.array ?? []
        try #require(results.count == 9)
        func value(_ key: String) -> JSONValue? { results.first { $0["key"]?.string == key }?["value"] }
        #expect(value("sleepQuality") == .number(JSONNumber(1)))
        #expect(value("energy") == .number(JSONNumber(0.42)))
        #expect(value("caffeine") == .bool(false))
        #expect(value("bedtime") == .string("22:30:00"))
        #expect(value("lastAlcohol") == .string("2026-09-26T23:00:00.000+0000"))
        #expect(value("bedtimeLocal") == .string("2026-09-26T19:00:00.000-0400"))
        // The "other" option's text is one more text answer there: it comes back so.
        #expect(value("activities") == .array([.string("read"), .string("other"), .string("a walk")]))
        // No answer: skipped.
        #expect(value("notes") == .null && results.first { $0["key"]?.string == "notes" }?["skipped"] == .bool(true))
        let form = value("symptoms")?.array?.first?.array ?? []
        #expect(form.map { $0["key"]?.string } == ["symptom", "severity"] && form.last?["value"] == .number(JSONNumber(2)))
        #expect(MyStudiesAppResponse.rebuild(read[150]).map(\.version) == .success("1.1"))

        let kicks = read[248]
        guard case .success(let task) = MyStudiesAppResponse.rebuild(kicks) else {
            Issue.record("the kick count could not be rebuilt")
            return
        }
        #expect(task.participantId == "pid-2" && task.activityId == "kicks" && task.version == "1.0")
        let rounds = task.data["results"]?.array?.first?["value"]?.array ?? []
        #expect(rounds.map { $0["key"]?.string } == ["duration", "count"] && rounds.last?["value"] == .number(JSONNumber(12)))

        // What cannot be read as a response is kept as read, for the import to list.
        guard case .failure(let refusal) = MyStudiesAppResponse.rebuild(read[249]) else {
            Issue.record("a resource naming no participant was taken")
            return
        }
        #expect(refusal.finding.message == "the response names no participant")
    }

    /// A questionnaire reference is looked up only when it names a questionnaire's version by FHIR
    /// ids: never `..`, a slash or a query.
    @Test func aQuestionnaireReferenceNamesNoOtherPath() throws {
        for reference in ["/fhirStores/FHIR_S/fhir/Questionnaire/../_history/1", "/fhirStores/FHIR_S/fhir/Questionnaire/q/_history/..",
                          "Questionnaire/q%2F..%2FPatient/_history/1", "Questionnaire/q/_history/1?_format=xml", "Questionnaire/q"] {
            let resource = try Self.json(#"{"questionnaire": "\#(reference)"}"#)
            #expect(MyStudiesFHIRResponse.questionnaire(resource).map { _ in true } == nil, "\(reference)")
        }
        let good = try Self.json(#"{"questionnaire": "/fhirStores/FHIR_S/fhir/Questionnaire/q-daily.2/_history/MTc5"}"#)
        #expect(MyStudiesFHIRResponse.questionnaire(good).map { "\($0.id)/\($0.versionId)" } == "q-daily.2/MTc5")
    }

    @Test func whatTheStoreRefusesIsSaidAndNoPageSendsTheTokenElsewhere() async throws {
        let server = try Self.server()
        await #expect {
            try await Self.reader(server, token: "ya29.expired").read(studyId: "STUDY01") { _ in }
        } throws: { error in
            "\(error)".contains("answered 401") && "\(error)".contains("invalid authentication credentials")
        }
        await #expect {
            try await Self.reader(server).read(studyId: "NOSTUDY") { _ in }
        } throws: { error in "\(error)".contains("answered 404") && "\(error)".contains("OperationOutcome") }
        await #expect {
            try await Self.reader(server).read(studyId: "STUDY01/../OTHER") { _ in }
        } throws: { error in "\(error)".contains("is not a study id") }
        #expect(try await server.requests().allSatisfy { !$0.contains("OTHER") })

        // A page whose next link points at another server: refused before anything is sent there.
        let elsewhere = try Self.server(nextBase: "http://127.0.0.2:9")
        var read = 0
        await #expect {
            try await Self.reader(elsewhere).read(studyId: "STUDY01") { _ in read += 1 }
        } throws: { error in "\(error)".contains("next link leaves the study's store") }
        #expect(read == 100)
    }
}
