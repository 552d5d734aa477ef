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
