import Foundation
import JSONText
import StudyModels

/// An active task's results as R4 `Observation`s (docs/fhir.md, Observation): one per task a
/// stored response holds, its numeric and yes/no results as components, derived from the
/// response's `QuestionnaireResponse`. The response is the record; the Observation is the same
/// measurement in the form clinical tools chart.
public enum TaskObservations {
    /// What each task records, each result with how it is written: a quantity with its UCUM
    /// unit, an integer or a boolean.
    public enum Value: Sendable, Equatable {
        case quantity(unit: String)
        case integer
        case boolean
    }

    /// The tasks' names and results, as the apps record them (`ItemBuilder.taskResults` types
    /// the same keys for the QuestionnaireResponse).
    public static func results(_ task: TaskType) -> [(key: String, display: String, value: Value)] {
        switch task {
        case .fetalKickCounter: [("duration", "Duration of the count", .quantity(unit: "s")), ("count", "Kicks counted", .integer)]
        case .towerOfHanoi: [("puzzleWasSolved", "Puzzle solved", .boolean), ("numberOfMoves", "Moves made", .integer)]
        case .spatialSpanMemory:
            [("score", "Score", .integer), ("numberOfGames", "Games played", .integer), ("numberOfFailures", "Games failed", .integer)]
        }
    }

    public static func display(_ task: TaskType) -> String {
        switch task {
        case .fetalKickCounter: "Fetal kick counter"
        case .towerOfHanoi: "Tower of Hanoi"
        case .spatialSpanMemory: "Spatial span memory"
        }
    }

    /// The task results of a response's data that are Observations, in their order: a result of
    /// a task's type, not skipped, whose value is its list of results. (`FHIRStore` counts the
    /// same with a JSON path: the two must agree.)
    public static func taskResults(_ data: JSONValue) -> [(task: TaskType, result: JSONValue, results: [JSONValue])] {
        guard case .array(let results)? = data["results"] else { return [] }
        return results.compactMap { result in
            guard let type = result["resultType"]?.text, let task = TaskType(rawValue: type), result["skipped"] != .bool(true),
                case .array(let inner)? = result["value"]
            else { return nil }
            return (task, result, inner)
        }
    }

    /// The id of a response's `ordinal`th Observation (from 1): `{response}-{ordinal}`.
    public static func id(responseId: Int64, ordinal: Int) -> String { "\(responseId)-\(ordinal)" }

    /// The response and ordinal an Observation id names; nil when it names none.
    public static func parse(id: String) -> (responseId: Int64, ordinal: Int)? {
        let parts = id.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let response = digits(parts[0], max: 18), let ordinal = digits(parts[1], max: 4), response > 0, ordinal > 0
        else { return nil }
        return (response, Int(ordinal))
    }

    private static func digits(_ text: Substring, max: Int) -> Int64? {
        guard (1...max).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(text)
    }

    /// FHIR's `integer` is 32 bits.
    static let integerRange = -2_147_483_648.0...2_147_483_647.0

    /// The Observations of one stored response, in the order of its task results.
    public static func observations(_ response: StoredResponse, naming: FHIRNaming) -> [JSONValue] {
        let system = naming.activeTaskSystem
        let patient = FHIRJSON.object(["reference": .string("Patient/\(response.participantId)")])
        let authored = QuestionnaireResponseMapping.authored(response)
        return taskResults(response.data).enumerated().map { index, found in
            var byKey: [ScalarKey: JSONValue] = [:]
            for inner in found.results {
                guard let key = inner["key"]?.text, inner["skipped"] != .bool(true), let value = inner["value"], byKey[ScalarKey(key)] == nil
                else { continue }
                byKey[ScalarKey(key)] = value
            }
            let components: [JSONValue?] = results(found.task).map { result in
                guard let value = byKey[ScalarKey(result.key)], let written = Self.value(value, as: result.value) else { return nil }
                return FHIRJSON.object([
                    "code": FHIRJSON.object([
                        "coding": .array([FHIRJSON.object([
                            "system": .string(system), "code": .string("\(found.task.rawValue).\(result.key)"),
                            "display": .string(result.display),
                        ])]),
                    ]),
                    written.name: written.value,
                ])
            }
            // The task's own start and end when the app wrote both, in order; else the run's end.
            let start = found.result["startTime"]?.text.flatMap(FHIRDates.dateTime).flatMap { $0.count > 10 ? $0 : nil }
            let end = found.result["endTime"]?.text.flatMap(FHIRDates.dateTime).flatMap { $0.count > 10 ? $0 : nil }
            let period: JSONValue? =
                if let start, let end, let from = Self.instant(start), let to = Self.instant(end), from <= to {
                    FHIRJSON.object(["start": .string(start), "end": .string(end)])
                } else { nil }
            let mapped = components.compactMap { $0 }
            return FHIRJSON.object([
                "resourceType": .string("Observation"),
                "id": .string(id(responseId: response.id, ordinal: index + 1)),
                "meta": FHIRJSON.meta(versionId: "1", lastUpdated: response.receivedAt),
                "status": .string("final"),
                "category": .array([FHIRJSON.object([
                    "coding": .array([FHIRJSON.object([
                        "system": .string("http://terminology.hl7.org/CodeSystem/observation-category"), "code": .string("survey"),
                        "display": .string("Survey"),
                    ])]),
                ])]),
                "code": FHIRJSON.object([
                    "coding": .array([FHIRJSON.object([
                        "system": .string(system), "code": .string(found.task.rawValue), "display": .string(display(found.task)),
                    ])]),
                    "text": .string(display(found.task)),
                ]),
                "subject": patient,
                "effectivePeriod": period,
                "effectiveDateTime": period == nil ? .string(authored) : nil,
                "issued": .string(FHIRJSON.instant(response.receivedAt)),
                "derivedFrom": .array([FHIRJSON.object(["reference": .string("QuestionnaireResponse/\(response.id)")])]),
                // A task whose results have none that maps says why it has no value.
                "dataAbsentReason": mapped.isEmpty
                    ? FHIRJSON.object([
                        "coding": .array([FHIRJSON.object([
                            "system": .string("http://terminology.hl7.org/CodeSystem/data-absent-reason"), "code": .string("error"),
                            "display": .string("Error"),
                        ])]),
                        "text": .string("the task's results have no value of the kind each is recorded as"),
                    ]) : nil,
                "component": FHIRJSON.array(mapped),
            ])
        }
    }

    /// A FHIR dateTime with its time, as an instant.
    static func instant(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }

    /// A result's value as the component writes it; nil for one of another shape (a count that
    /// is not whole, a boolean that is a number), which is left out rather than guessed at.
    static func value(_ value: JSONValue, as kind: Value) -> (name: String, value: JSONValue)? {
        switch (kind, value) {
        case (.boolean, .bool):
            return ("valueBoolean", value)
        case (.integer, .number(let number)) where number.isWhole && integerRange.contains(number.double):
            return ("valueInteger", .number(JSONNumber(number.double)))
        case (.quantity(let unit), .number(let number)) where number.double.isFinite:
            return ("valueQuantity", FHIRJSON.object([
                "value": .number(number), "unit": .string(unit), "system": .string("http://unitsofmeasure.org"), "code": .string(unit),
            ]))
        default:
            return nil
        }
    }
}
