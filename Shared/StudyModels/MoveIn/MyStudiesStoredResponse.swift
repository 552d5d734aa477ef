import Foundation
import JSONText

/// One response as a MyStudies 2.x deployment's response server stored it: a document of the
/// Firestore collection `{studyId}-RESPONSES/{studyId}/Activities`, holding the response's
/// metadata (`studyId`, `studyVersion`, `activityId`, `activityRunId`, `version`, ...), its step
/// results (`results`), `participantId`, `siteId`, `sharingConsent` and `createdTimestamp` (the
/// milliseconds it was received at, as text). Kept as read, one per line of the file
/// `studystack-import responses read` writes.
public struct MyStudiesStoredResponse: Codable, Sendable, Equatable {
    /// The study whose collection it was read from.
    public var studyId: String
    /// The document's name at the source: its identity there, and the key that keeps a repeated
    /// import from storing it twice.
    public var document: String
    /// When Firestore created the document (RFC 3339).
    public var createTime: String?
    /// The document's fields as plain JSON (`FirestoreValues.plain`).
    public var fields: JSONValue

    public init(studyId: String, document: String, createTime: String?, fields: JSONValue) {
        self.studyId = studyId
        self.document = document
        self.createTime = createTime
        self.fields = fields
    }
}

/// Firestore's typed values (its REST API's `Value`) as the plain JSON the MyStudies response
/// server stored them from: a string, a boolean, a number (`integerValue` comes as text: it is
/// read as the number it writes, exactly), null, an array, an object; a timestamp, a reference
/// and bytes (base64) as their text, a geo point as `{latitude, longitude}`.
public enum FirestoreValues {
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The document's `fields` as one object.
    public static func plain(fields: JSONValue?) throws(Problem) -> JSONValue {
        guard let fields else { return .object([:]) }
        guard case .object(let members) = fields else { throw Problem(description: "a document's fields are not an object") }
        var pairs: [(String, JSONValue)] = []
        for (name, value) in members { pairs.append((name, try plain(value))) }
        return .object(JSONObject(pairs: pairs))
    }

    public static func plain(_ value: JSONValue) throws(Problem) -> JSONValue {
        guard case .object(let typed) = value, typed.count == 1, let (kind, inner) = typed.first(where: { _ in true }) else {
            throw Problem(description: "a value is not one of Firestore's typed values")
        }
        switch kind {
        case "nullValue": return .null
        case "booleanValue":
            guard case .bool = inner else { throw Problem(description: "a booleanValue is not a boolean") }
            return inner
        case "integerValue":
            // int64 in JSON is text; a number is taken too.
            guard let text = inner.string ?? inner.text, text.utf8.count <= 20, let number = JSONNumber(text: text), Int64(text) != nil
            else { throw Problem(description: "an integerValue is not a 64-bit integer") }
            return .number(number)
        case "doubleValue":
            if case .number = inner { return inner }
            // NaN and the infinities come as text; JSON has no number for them.
            guard let text = inner.string, ["NaN", "Infinity", "-Infinity"].contains(text) else {
                throw Problem(description: "a doubleValue is not a number")
            }
            return .string(text)
        case "stringValue", "timestampValue", "referenceValue", "bytesValue":
            guard case .string = inner else { throw Problem(description: "a \(kind) is not text") }
            return inner
        case "geoPointValue":
            // Proto3 leaves a zero out: a member not sent is 0, not null.
            let zero = JSONValue.number(JSONNumber(0))
            return .object(JSONObject(pairs: [("latitude", inner["latitude"] ?? zero), ("longitude", inner["longitude"] ?? zero)]))
        case "arrayValue":
            var items: [JSONValue] = []
            for item in inner["values"]?.array ?? [] { items.append(try plain(item)) }
            return .array(items)
        case "mapValue":
            return try plain(fields: inner["fields"])
        default:
            throw Problem(description: "\(kind) is not one of Firestore's typed values")
        }
    }
}

/// A stored response as the app sent it to `processResponse`, rebuilt from what the MyStudies 2.x
/// response server kept: that server joined each step with its design (title, text, format,
/// options, ...) and moved a form's answers into `actvityValueGroup`; the app's own members are
/// taken back (`resultType`, `key`, `startTime`, `endTime`, `skipped`, `value`), a form's answers
/// as one list again. The response's own start and end, which that server did not keep, are its
/// first step's start and its last step's end.
public struct MyStudiesAppResponse: Sendable, Equatable {
    public var participantId: String
    public var activityId: String
    public var version: String
    public var runId: String?
    public var metadata: JSONValue
    public var data: JSONValue
    /// When the source received it (`createdTimestamp`), else when Firestore stored it.
    public var receivedAt: Date?

    /// The members of a step result the apps send.
    static let stepMembers = ["resultType", "key", "startTime", "endTime", "skipped", "value"]
    /// The metadata members the apps send.
    static let metadataMembers = ["studyId", "studyVersion", "activityId", "activityRunId", "name", "version"]

    /// Why a stored response cannot be rebuilt: what identifies it is missing.
    public struct Refusal: Error, Sendable, Equatable {
        public var finding: MoveInFinding
    }

    public static func rebuild(_ stored: MyStudiesStoredResponse) -> Result<MyStudiesAppResponse, Refusal> {
        let fields = stored.fields
        let refuse = { (message: String) in
            Result<MyStudiesAppResponse, Refusal>.failure(Refusal(finding: MoveInFinding(studyId: stored.studyId, at: stored.document, effect: .notImported, message: message)))
        }
        guard let participantId = Lenient.text(fields["participantId"]) else { return refuse("the response names no participant") }
        guard let activityId = Lenient.text(fields["activityId"]) else { return refuse("the response names no activity") }
        guard let version = Lenient.text(fields["version"]) else { return refuse("the response names no activity version") }
        guard let results = fields["results"]?.array else { return refuse("the response holds no results") }
        let steps = results.map(step)
        var data: [(String, JSONValue)] = []
        if let start = steps.first?["startTime"] { data.append(("startTime", start)) }
        if let end = steps.last?["endTime"] { data.append(("endTime", end)) }
        data.append(("results", .array(steps)))
        let metadata = Self.metadataMembers.compactMap { name in fields[name].map { (name, $0) } }
        let received = Lenient.text(fields["createdTimestamp"]).flatMap { Int64($0) }.map { Date(timeIntervalSince1970: Double($0) / 1000) }
            ?? stored.createTime.flatMap(WireInstants.instant)
        return .success(
            MyStudiesAppResponse(
                participantId: participantId, activityId: activityId, version: version, runId: Lenient.text(fields["activityRunId"]),
                metadata: .object(JSONObject(pairs: metadata)), data: .object(JSONObject(pairs: data)), receivedAt: received))
    }

    /// One step result as the app sent it.
    static func step(_ stored: JSONValue) -> JSONValue {
        guard case .object(let members) = stored else { return stored }
        var pairs = stepMembers.compactMap { name in members[name].map { (name, $0) } }
        // A form's answers, which the server moved into its value group, are its value again.
        if members["resultType"]?.string == "grouped", let group = members["actvityValueGroup"]?["valueGroup"]?.array, !group.isEmpty {
            pairs.removeAll { $0.0 == "value" }
            pairs.append(("value", .array([.array(group.map(step))])))
        }
        return .object(JSONObject(pairs: pairs))
    }
}

/// Parts of stored responses read and written as JSON text directly: `JSONDecoder` builds each
/// response's open-ended fields through `Codable`, which took seconds for one part of 500
/// responses; the JSON parser builds the same values within the request's budget in a small
/// fraction of that. The members are those `Codable` reads and writes.
extension MovedResponsesPart {
    /// Why a part is not one: where, and what is wrong there.
    public struct Problem: Error, Sendable, Equatable {
        public var pointer: String
        public var message: String
    }

    public init(json: JSONValue) throws(Problem) {
        guard case .object(let members) = json else { throw Problem(pointer: "", message: "must be an object") }
        guard let source = members["source"]?.string else { throw Problem(pointer: "/source", message: "is required, as text") }
        guard case .array(let items)? = members["responses"] else { throw Problem(pointer: "/responses", message: "is required, as a list") }
        var responses: [MyStudiesStoredResponse] = []
        responses.reserveCapacity(items.count)
        for (index, item) in items.enumerated() { responses.append(try MyStudiesStoredResponse(json: item, at: "/responses/\(index)")) }
        self.init(source: source, responses: responses)
    }

    public var json: JSONValue {
        .object(JSONObject(pairs: [("source", .string(source)), ("responses", .array(responses.map(\.json)))]))
    }
}

extension MyStudiesStoredResponse {
    /// One stored response from its JSON (a line of the file the readers write, or an item of a part).
    public init(json: JSONValue, at pointer: String = "") throws(MovedResponsesPart.Problem) {
        typealias Problem = MovedResponsesPart.Problem
        guard case .object(let response) = json else { throw Problem(pointer: pointer, message: "must be an object") }
        guard let studyId = response["studyId"]?.string else { throw Problem(pointer: pointer + "/studyId", message: "is required, as text") }
        guard let document = response["document"]?.string else { throw Problem(pointer: pointer + "/document", message: "is required, as text") }
        let createTime: String?
        switch response["createTime"] {
        case nil, .null?: createTime = nil
        case .string(let text)?: createTime = text
        default: throw Problem(pointer: pointer + "/createTime", message: "must be text")
        }
        guard let fields = response["fields"] else { throw Problem(pointer: pointer + "/fields", message: "is required") }
        self.init(studyId: studyId, document: document, createTime: createTime, fields: fields)
    }

    public var json: JSONValue {
        var pairs: [(String, JSONValue)] = [("studyId", .string(studyId)), ("document", .string(document))]
        if let createTime { pairs.append(("createTime", .string(createTime))) }
        pairs.append(("fields", fields))
        return .object(JSONObject(pairs: pairs))
    }
}
