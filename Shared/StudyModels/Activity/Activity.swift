import Foundation

/// An activity's design: what `/StudyMetaData/activity` returns inside `activity`.
public struct ActivityDesign: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case questionnaire, task
    }

    /// `questionnaire` or `task`; designs from the original servers may leave it empty, and then
    /// it follows from the steps (`kind`).
    public var type: String?
    public var metadata: ActivityMetadata
    public var steps: [ActivityStep]

    public init(type: Kind, metadata: ActivityMetadata, steps: [ActivityStep]) {
        self.type = type.rawValue
        self.metadata = metadata
        self.steps = steps
    }

    /// A task when it says so or when its steps are active tasks; a questionnaire otherwise.
    public var kind: Kind {
        if let type, let kind = Kind(rawValue: type) { return kind }
        return steps.contains { $0.type == .task } ? .task : .questionnaire
    }

    /// Every step, with a form's questions after the form.
    public var allSteps: [ActivityStep] {
        steps.flatMap { [$0] + ($0.steps ?? []) }
    }
}

/// `activity.metadata`. On import only `activityId` matters; the server sets the rest when it
/// serves a published version.
public struct ActivityMetadata: Codable, Sendable, Equatable {
    public var studyId: String?
    public var activityId: String?
    public var name: LocalizedText?
    /// The activity version as the apps see it ("1.0", "1.1", ...).
    public var version: String?
    public var lastModified: String?
    public var startDate: String?
    public var endDate: String?

    public init(
        studyId: String? = nil, activityId: String? = nil, name: LocalizedText? = nil, version: String? = nil,
        lastModified: String? = nil, startDate: String? = nil, endDate: String? = nil
    ) {
        self.studyId = studyId
        self.activityId = activityId
        self.name = name
        self.version = version
        self.lastModified = lastModified
        self.startDate = startDate
        self.endDate = endDate
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        studyId = try container.decodeIfPresent(String.self, forKey: .studyId)
        activityId = try container.decodeIfPresent(String.self, forKey: .activityId)
        name = try container.decodeIfPresent(LocalizedText.self, forKey: .name)
        // Versions were floats in the original servers and may arrive as numbers.
        version = try container.decodeIfPresent(JSONValue.self, forKey: .version)?.text
        lastModified = try container.decodeIfPresent(String.self, forKey: .lastModified)
        startDate = try container.decodeIfPresent(String.self, forKey: .startDate)
        endDate = try container.decodeIfPresent(String.self, forKey: .endDate)
    }
}

/// Reads an activity given in the original servers' JSON: either the whole
/// `/StudyMetaData/activity` reply (`{"message": "SUCCESS", "activity": {...}}`) or just the
/// `activity` object.
public enum ActivityImport {
    public struct ParseError: Error, CustomStringConvertible, Sendable, Equatable {
        /// A JSON Pointer (RFC 6901) to the offending value, or "" for the document itself.
        public let pointer: String
        public let message: String
        public var description: String { pointer.isEmpty ? message : "\(pointer): \(message)" }
    }

    public static func parse(_ data: Data) throws(ParseError) -> ActivityDesign {
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: data)
        } catch let error as DecodingError {
            throw describe(error)
        } catch {
            throw ParseError(pointer: "", message: "activity is not valid JSON: \(error)")
        }
        return envelope.activity
    }

    /// Either shape: `{"activity": {...}}` or the activity object itself.
    private struct Envelope: Decodable {
        var activity: ActivityDesign

        enum CodingKeys: String, CodingKey { case activity }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if container.contains(.activity) {
                activity = try container.decode(ActivityDesign.self, forKey: .activity)
            } else {
                activity = try ActivityDesign(from: decoder)
            }
        }
    }

    static func describe(_ error: DecodingError) -> ParseError {
        let problem = JSONPointer.problem(for: error, document: "activity")
        return ParseError(pointer: problem.pointer, message: problem.message)
    }
}

/// JSON Pointers (JSONText's) for locating problems in documents.
extension JSONPointer {
    /// `/activity/steps/3/format/textChoices/0/value` from a decoding path.
    public static func from(_ path: [any CodingKey]) -> String {
        path.map { key in "/" + (key.intValue.map(String.init) ?? escape(key.stringValue)) }.joined()
    }

    /// The problem a decoding error describes, located by JSON Pointer; `document` names what
    /// was being read ("activity", "study document") for syntax errors.
    public static func problem(for error: DecodingError, document: String) -> ValidationProblem {
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            let detail = (context.underlyingError.map { "\($0)" } ?? context.debugDescription)
            return ValidationProblem(pointer: "", message: "\(document) is not valid JSON: \(detail)")
        case .dataCorrupted(let context):
            return ValidationProblem(pointer: from(context.codingPath), message: context.debugDescription)
        case .keyNotFound(let key, let context):
            return ValidationProblem(pointer: from(context.codingPath + [key]), message: "is required")
        case .typeMismatch(let type, let context):
            return ValidationProblem(pointer: from(context.codingPath), message: "must be \(describe(type))")
        case .valueNotFound(let type, let context):
            return ValidationProblem(pointer: from(context.codingPath), message: "must be \(describe(type)), not null")
        @unknown default:
            return ValidationProblem(pointer: "", message: "\(document) could not be read")
        }
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type: "an integer"
        case is Double.Type: "a number"
        default: type == [String: Any].self ? "an object" : (type == [Any].self ? "an array" : "of type \(type)")
        }
    }
}
