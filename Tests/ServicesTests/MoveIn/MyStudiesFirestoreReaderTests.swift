import AsyncHTTPClient
import Foundation
import JSONText
import MoveIn
import StudyModels
import Testing
import TestSupport

/// `MyStudiesFirestoreReader` against Firestore's REST API (`FirestoreTestServer`): the documents
/// a MyStudies 2.x response server stores for each response, read back page by page as the plain
/// JSON it stored.
struct MyStudiesFirestoreReaderTests {
    /// A response as the response server stores it: the metadata bean's properties, the results,
    /// and what it adds (participant, site, sharing, the time it was received).
    static func stored(_ run: Int, participant: String = "pid-1") throws -> JSONValue {
        let text = """
            {"studyId": "STUDY01", "studyVersion": "1.0", "activityId": "daily", "activityRunId": "\(run)", "activityType": "questionnaire",
             "name": "Daily", "version": "1.2", "lastModified": "", "startDate": "", "endDate": "",
             "results": [
               {"type": "question", "resultType": "scale", "key": "mood", "title": "", "text": "", "skipped": false,
                "startTime": "2026-10-02T09:00:00.000-0400", "endTime": "2026-10-02T09:00:05.000-0400", "value": \(run % 10),
                "options": [], "destinations": [], "format": {}, "steps": [], "actvityValueGroup": {"valueGroup": []}},
               {"type": "question", "resultType": "continuousScale", "key": "energy", "skipped": false, "value": 2.75},
               {"type": "question", "resultType": "textChoice", "key": "feel", "skipped": true, "value": ["a", "b"]}
             ],
             "participantId": "\(participant)", "siteId": "site-1", "sharingConsent": "Provided",
             "createdTimestamp": "\(1_759_410_000_000 + run)"}
            """
        return try JSONValue.parse(Array(text.utf8), budget: .init(maxBytes: 1 << 20, maxNodes: 10_000))
    }

    @Test func readsEveryStoredResponsePageByPageAsItWasStored() async throws {
        let documents = try (1...650).map { (id: "doc\($0)", fields: try Self.stored($0), createTime: "2026-10-02T13:00:0\($0 % 10).123456Z") }
        let server = try FirestoreTestServer(collections: [
            MyStudiesFirestoreReader.collection(of: "STUDY01"): documents,
            MyStudiesFirestoreReader.collection(of: "OTHER"): [(id: "x", fields: try Self.stored(1), createTime: "2026-10-02T13:00:00Z")],
        ])
        let reader = MyStudiesFirestoreReader(base: URL(string: server.base)!, project: server.project, accessToken: server.token, client: .shared)
        var read: [MyStudiesStoredResponse] = []
        let count = try await reader.read(studyId: "STUDY01") { read.append($0) }
        #expect(count == 650)
        try #require(read.count == 650)
        for (index, response) in read.enumerated() {
            #expect(response.fields == (try Self.stored(index + 1)), "doc\(index + 1)")
        }
        #expect(read[0].document == "projects/\(server.project)/databases/(default)/documents/STUDY01-RESPONSES/STUDY01/Activities/doc1")
        #expect(read[0].createTime == "2026-10-02T13:00:01.123456Z" && read.allSatisfy { $0.studyId == "STUDY01" })
        // Integers come back as the numbers they were (Firestore sends them as text).
        #expect(read[6].fields["results"]?.array?.first?["value"] == .number(JSONNumber(7)))
        let requests = try await server.requests()
        #expect(requests.count == 3, "three pages of 300")
    }

    @Test func whatFirestoreRefusesIsSaidAndAStudyIdCannotReachAnotherPath() async throws {
        let server = try FirestoreTestServer(collections: [:])
        let wrong = MyStudiesFirestoreReader(base: URL(string: server.base)!, project: server.project, accessToken: "expired", client: .shared)
        let refused = await #expect(throws: MyStudiesFirestoreReader.ReadError.self) { try await wrong.read(studyId: "STUDY01") { _ in } }
        #expect(refused?.description.contains("401") == true && refused?.description.contains("invalid authentication") == true)
        let elsewhere = MyStudiesFirestoreReader(base: URL(string: server.base)!, project: "someone-else", accessToken: server.token, client: .shared)
        await #expect(throws: MyStudiesFirestoreReader.ReadError.self) { try await elsewhere.read(studyId: "STUDY01") { _ in } }

        let reader = MyStudiesFirestoreReader(base: URL(string: server.base)!, project: server.project, accessToken: server.token, client: .shared)
        for studyId in ["../../x", "a/b", "x?pageToken=1", "", "é"] {
            await #expect(throws: MyStudiesFirestoreReader.ReadError.self, "\(studyId)") { try await reader.read(studyId: studyId) { _ in } }
        }
        // None of them was sent.
        #expect(try await server.requests().count == 2)
        // The project and database are path segments too, encoded as one.
        let odd = MyStudiesFirestoreReader(base: URL(string: server.base)!, project: "a/b?c", accessToken: server.token, client: .shared)
        await #expect(throws: MyStudiesFirestoreReader.ReadError.self) { try await odd.read(studyId: "STUDY01") { _ in } }
        #expect(try await server.requests().last?.hasPrefix("/v1/projects/a%2Fb%3Fc/databases/(default)/documents/STUDY01-RESPONSES/STUDY01/Activities?") == true)
    }

    @Test func typedValuesReadAsPlainJSON() throws {
        let typed = try JSONValue.parse(Array("""
            {"a": {"nullValue": null}, "b": {"booleanValue": true}, "c": {"integerValue": "-9223372036854775808"},
             "d": {"doubleValue": 1.5}, "e": {"doubleValue": "NaN"}, "f": {"timestampValue": "2026-10-02T13:00:00Z"},
             "g": {"geoPointValue": {"latitude": 1, "longitude": 2}}, "h": {"arrayValue": {}},
             "i": {"mapValue": {"fields": {"j": {"stringValue": "k"}}}}, "l": {"bytesValue": "AAE="}}
            """.utf8), budget: .init(maxBytes: 1 << 16, maxNodes: 1000))
        let plain = try FirestoreValues.plain(fields: typed)
        #expect(plain["a"] == .null && plain["b"] == .bool(true) && plain["c"]?.text == "-9223372036854775808")
        #expect(plain["d"] == .number(JSONNumber(1.5)) && plain["e"] == .string("NaN") && plain["f"] == .string("2026-10-02T13:00:00Z"))
        #expect(plain["g"]?["latitude"] == .number(JSONNumber(1)) && plain["h"] == .array([]) && plain["i"]?["j"] == .string("k"))
        #expect(plain["l"] == .string("AAE="))
        for bad in [#"{"x": {"integerValue": "1.5"}}"#, #"{"x": {"integerValue": "9223372036854775808"}}"#, #"{"x": {"stringValue": 1}}"#,
                    #"{"x": {"stringValue": "a", "booleanValue": true}}"#, #"{"x": {"futureValue": 1}}"#, #"{"x": "plain"}"#] {
            let value = try JSONValue.parse(Array(bad.utf8), budget: .init(maxBytes: 1 << 16, maxNodes: 1000))
            #expect(throws: FirestoreValues.Problem.self, "\(bad)") { try FirestoreValues.plain(fields: value) }
        }
    }
}
