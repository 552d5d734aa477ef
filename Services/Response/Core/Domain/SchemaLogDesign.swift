import Foundation
import StudyModels

/// The schema app's page events as a list of the study's tables (`SchemaLog`), so they go where
/// survey responses go: queued and processed the same way, in exports, the data grids and the
/// LabKey API. Its design is built in, not fetched from study-metadata; its name is one no schema
/// module can take (`SchemaImport.activityIds` makes `module-<n>` or a module's uuid).
package enum SchemaLogDesign {
    package static let activityId = StudySource.schemaLogList
    package static let version = "1"

    /// One row per event: the page and event, when it happened (with the offset the phone was
    /// at), the phone's epoch milliseconds as text (beyond a 32-bit number), the module's place in
    /// the protocol and its activity, and the platform.
    package static let design: Data = {
        func step(_ key: String, _ resultType: String, _ format: JSONValue) -> JSONValue {
            .object(["type": .string("question"), "resultType": .string(resultType), "key": .string(key), "format": format])
        }
        let text: JSONValue = .object(["maxLength": .number(0)])
        let steps: [JSONValue] = [
            step("page", "text", text), step("event", "text", text),
            step("timestamp", "date", .object(["style": .string("Date-Time")])), step("timestampInMs", "text", text),
            step("moduleIndex", "numeric", .object(["style": .string("Integer")])), step("module", "text", text),
            step("platform", "text", text),
        ]
        let activity: JSONValue = .object([
            "activity": .object([
                "type": .string("questionnaire"),
                "metadata": .object(["activityId": .string(activityId), "version": .string(version), "name": .string("schema app page events")]),
                "steps": .array(steps),
            ])
        ])
        return Data(activity.serialized(sortedKeys: true).utf8)
    }()

    /// The results of one log POST.
    package static func results(_ submission: SchemaSubmission, moduleActivityId: String?) -> [JSONValue] {
        func result(_ key: String, _ resultType: String, _ value: JSONValue?) -> JSONValue {
            .object(["key": .string(key), "resultType": .string(resultType), "value": value ?? .null, "skipped": .bool(value == nil)])
        }
        let fields = submission.fields
        let moment = fields["timestamp"].flatMap(SchemaAnswers.answerDate)
        return [
            result("page", "text", fields["page"].map(JSONValue.string)),
            result("event", "text", fields["event"].map(JSONValue.string)),
            result("timestamp", "date", moment.map(JSONValue.string)),
            result("timestampInMs", "text", fields["timestamp_in_ms"].map(JSONValue.string)),
            result("moduleIndex", "numeric", .number(Double(submission.moduleIndex))),
            result("module", "text", moduleActivityId.map(JSONValue.string)),
            result("platform", "text", fields["platform"].map(JSONValue.string)),
        ]
    }
}
