import Foundation
import TestSupport

/// Survey responses as the iOS app sends them, for the journeys.
struct JourneyResponses: Sendable {
    /// A timestamp as the apps write them.
    static func now() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        return formatter.string(from: Date())
    }

    /// The daily check-in answered as the app sends it: every response type, the form repeated
    /// twice. `notes` is the free-text answer (a load test makes each response recognisable by it).
    static func dailyResponse(participant: String, name: String, version: String, notes: String = "Woke once") -> [String: Any] {
        let time = now()
        func result(_ type: String, _ key: String, _ value: Any) -> [String: Any] {
            ["resultType": type, "key": key, "startTime": time, "endTime": time, "skipped": false, "value": value]
        }
        return [
            "type": "questionnaire", "participantId": participant,
            "metadata": ["studyId": "DEMOSTUDY", "activityId": "daily", "name": name, "version": version, "activityRunId": "1"],
            "data": [
                "resultType": "questionnaire", "startTime": time, "endTime": time,
                "results": [
                    ["resultType": "null", "key": "intro", "startTime": time, "endTime": time, "skipped": false],
                    result("scale", "sleepQuality", 7), result("continuousScale", "energy", 0.64),
                    result("textScale", "mood", "high"), result("valuePicker", "naps", "1"),
                    result("imageChoice", "weather", "sun"), result("boolean", "caffeine", true),
                    result("numeric", "caffeineCups", 2), result("textChoice", "activities", ["read", "other"]),
                    result("timeOfDay", "bedtime", "22:45:00"), result("date", "lastAlcohol", time),
                    result("text", "notes", notes), result("email", "contactEmail", "me@example.org"),
                    result("timeInterval", "timeToSleep", 900), result("height", "height", 172),
                    result("location", "place", "42.36,-71.06"),
                    result("grouped", "symptoms", [
                        [result("text", "symptom", "headache"), result("scale", "severity", 2)],
                        [result("text", "symptom", "fatigue"), result("scale", "severity", 4)],
                    ]),
                ],
            ],
        ]
    }

    /// The kick counter's result from the original server's test data (conformance), as it is.
    static func kickResponse(participant: String) throws -> [String: Any] {
        let file = Conformance.labkey.appendingPathComponent("SurveyMetadata/DYNAMICSCHEMASTUDY_FKC-74_1.0--RESPONSE.json")
        let data = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
        return [
            "type": "task", "participantId": participant,
            "metadata": ["studyId": "DEMOSTUDY", "activityId": "kicks", "name": "kicks", "version": "1.0", "activityRunId": "1"],
            "data": data,
        ]
    }
}
