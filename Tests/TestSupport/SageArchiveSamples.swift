import Foundation

/// A Sage assessment (`sleep`) and archives of its runs as Sage's clients write them, for the
/// tests of receiving archives.
public enum SageArchiveSamples {
    /// A section, single and multiple choices, numbers, text and a duration; and a countdown,
    /// which makes it Sage-only (the MyStudies apps have no countdown step). The example of
    /// docs/sage.md, read from there.
    public static let assessment: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/examples/sage-sleep-assessment.json")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? "{}"
    }()

    public static func result(runId: String, hours: Int = 7) -> String {
        """
        {"type": "assessment", "identifier": "sleep", "assessmentIdentifier": "sleep", "taskRunUUID": "\(runId)",
         "startDate": "2026-11-20T08:00:00.000-05:00", "endDate": "2026-11-20T08:03:00.000-05:00",
         "stepHistory": [
           {"type": "base", "identifier": "intro", "startDate": "2026-11-20T08:00:00.000-05:00", "endDate": "2026-11-20T08:00:05.000-05:00"},
           {"type": "answer", "identifier": "hours", "answerType": {"type": "integer"}, "value": \(hours),
            "startDate": "2026-11-20T08:00:05.000-05:00", "endDate": "2026-11-20T08:00:15.000-05:00"},
           {"type": "section", "identifier": "mood", "startDate": "2026-11-20T08:00:15.000-05:00", "endDate": "2026-11-20T08:01:00.000-05:00",
            "stepHistory": [
              {"type": "answer", "identifier": "feeling", "answerType": {"type": "integer"}, "value": 2,
               "startDate": "2026-11-20T08:00:15.000-05:00", "endDate": "2026-11-20T08:00:30.000-05:00"},
              {"type": "answer", "identifier": "factors", "answerType": {"type": "array", "baseType": "string"}, "value": ["noise", "light"],
               "startDate": "2026-11-20T08:00:30.000-05:00", "endDate": "2026-11-20T08:01:00.000-05:00"}
            ]},
           {"type": "answer", "identifier": "notes", "answerType": {"type": "string"}, "value": null,
            "startDate": "2026-11-20T08:01:00.000-05:00", "endDate": "2026-11-20T08:01:10.000-05:00"},
           {"type": "answer", "identifier": "nap", "answerType": {"type": "duration"}, "value": 1800,
            "startDate": "2026-11-20T08:01:10.000-05:00", "endDate": "2026-11-20T08:03:00.000-05:00"}
         ]}
        """
    }

    public static func metadata(files: [String]) -> String {
        let listed = files.map { #"{"filename": "\#($0)", "timestamp": "2026-11-20T08:03:00.000-05:00", "contentType": "application/json"}"# }
        return """
            {"appName": "Sleep Study", "appVersion": "1.0 (12)", "deviceInfo": "iPhone15,2; iOS/17.1", "deviceTypeIdentifier": "iPhone15,2",
             "files": [\(listed.joined(separator: ", "))]}
            """
    }

    /// An archive as iOS writes it: the manifest, the result, a motion file.
    public static func archive(runId: String = UUID().uuidString, hours: Int = 7) -> [UInt8] {
        var zip = ZipWriter()
        zip.add("metadata.json", Array(metadata(files: ["assessmentResult.json", "motion.json"]).utf8))
        zip.add("assessmentResult.json", Array(result(runId: runId, hours: hours).utf8))
        zip.add("motion.json", Array(#"[{"uptime": 1.5, "x": 0.1, "y": 0.2, "z": 0.98}]"#.utf8))
        return zip.bytes()
    }

    /// An older client's archive: answers.json (arrays as comma-joined text) and info.json.
    public static func flatArchive(hours: Int = 6) -> [UInt8] {
        var zip = ZipWriter()
        zip.add("metadata.json", Array(metadata(files: ["answers.json", "motion.json"]).utf8))
        zip.add("info.json", Array(#"{"item": "sleep", "dataFilename": "answers.json", "format": "v2_generic", "appName": "Sleep Study", "appVersion": "1.0", "phoneInfo": "iPhone", "files": []}"#.utf8))
        zip.add("answers.json", Array(#"{"hours": \#(hours), "mood_feeling": 1, "mood_factors": "worry,noise", "notes": "slept badly", "nap": "600"}"#.utf8))
        zip.add("motion.json", Array("[]".utf8))
        return zip.bytes()
    }

    /// Sage's published schema of an assessment result, which both clients name in the manifest.
    static let resultSchema = "https://sage-bionetworks.github.io/mobile-client-json/schemas/v2/AssessmentResultObject.json"

    /// An archive as Sage's iOS client builds one (docs/sage.md, What Sage's clients do): the
    /// flat `answers.json` (pretty-printed, sorted keys, a multiple choice as its values joined
    /// with `,`, an unanswered question left out) listed with the relative `answers_schema.json`
    /// written beside it; `assessmentResult.json` listed with Sage's published schema; the
    /// manifest with the schedule's fields; `info.json`, unlisted.
    public static func iosClientArchive(runId: String = UUID().uuidString, hours: Int = 7) -> [UInt8] {
        var zip = ZipWriter()
        zip.add("answers.json", Array("""
            {
              "hours" : \(hours),
              "mood_factors" : "noise,light",
              "mood_feeling" : 2,
              "nap" : 1800
            }
            """.utf8))
        zip.add("answers_schema.json", Array(#"{"$id":"answers_schema.json","$schema":"http://json-schema.org/draft-07/schema#","type":"object","title":"answers_schema","description":"sleep","properties":{"hours":{"type":"integer","description":"Hours slept"},"mood_factors":{"type":"string","description":"What kept you up?"},"mood_feeling":{"type":"integer","description":"How do you feel?"},"nap":{"type":"number","description":"Naps"}}}"#.utf8))
        zip.add("assessmentResult.json", Array(result(runId: runId, hours: hours).utf8))
        zip.add("metadata.json", Array("""
            {
              "appName" : "Sleep Study",
              "appVersion" : "1.4 (212)",
              "deviceInfo" : "iPhone15,2; iOS/17.1",
              "deviceTypeIdentifier" : "iPhone15,2",
              "files" : [
                {
                  "contentType" : "application/json",
                  "filename" : "answers.json",
                  "jsonSchema" : "answers_schema.json",
                  "timestamp" : "2026-11-20T08:03:00.000-05:00"
                },
                {
                  "contentType" : "application/json",
                  "filename" : "assessmentResult.json",
                  "identifier" : "sleep",
                  "jsonSchema" : "\(resultSchema)",
                  "timestamp" : "2026-11-20T08:03:00.000-05:00"
                }
              ],
              "scheduledActivityGuid" : "2fJ9yq8bKzNCmVE3gH5K1w",
              "scheduleIdentifier" : "nA6D1Hq9VgB2KL0jTqE3Pw",
              "scheduledOn" : "2026-11-20T08:00:00.000-05:00",
              "activityLabel" : "Sleep"
            }
            """.utf8))
        zip.add("info.json", Array(#"{"createdOn":"2026-11-20T08:03:01.000-05:00","files":[{"filename":"answers.json","timestamp":"2026-11-20T08:03:00.000-05:00","contentType":"application/json"},{"filename":"assessmentResult.json","timestamp":"2026-11-20T08:03:00.000-05:00","contentType":"application/json"}],"dataFilename":"answers.json","format":"v2_generic","item":"sleep","appName":"Sleep Study","appVersion":"1.4","phoneInfo":"iPhone15,2"}"#.utf8))
        return zip.bytes()
    }

    /// An archive as Sage's Android client builds one: compact JSON, times as UTC instants with
    /// as many fraction digits as they have, the result listed first, `answers.json` (a multiple
    /// choice as each value's JSON text joined with `,`) listed with the relative
    /// `answers_schema.json`, and `info.json` unlisted.
    public static func androidClientArchive(runId: String = UUID().uuidString, hours: Int = 7) -> [UInt8] {
        var zip = ZipWriter()
        let result = result(runId: runId, hours: hours)
            .replacingOccurrences(of: "-05:00", with: "Z").replacingOccurrences(of: "T08:", with: "T13:")
        zip.add("assessmentResult.json", Array(result.utf8))
        zip.add("answers.json", Array(#"{"hours":\#(hours),"mood_feeling":2,"mood_factors":""noise","light"","nap":1800}"#.utf8))
        zip.add("answers_schema.json", Array(#"{"$id":"answers_schema.json","$schema":"http://json-schema.org/draft-07/schema#","type":"object","title":"answers_schema","description":"sleep","properties":{"hours":{"type":"integer","description":"Hours slept"},"mood_feeling":{"type":"integer","description":"How do you feel?"},"mood_factors":{"type":"string","description":"What kept you up?"},"nap":{"type":"number","description":null}}}"#.utf8))
        zip.add("metadata.json", Array(#"{"appName":"Sleep Study","appVersion":"version 1.4, build 212","deviceInfo":"oriole Pixel 6; Android/14","deviceTypeIdentifier":"Pixel 6","files":[{"filename":"assessmentResult.json","timestamp":"2026-11-20T13:03:00Z","contentType":"application/json","identifier":"sleep","jsonSchema":"\#(resultSchema)"},{"filename":"answers.json","timestamp":"2026-11-20T13:03:01.482913557Z","contentType":"application/json","jsonSchema":"answers_schema.json"}]}"#.utf8))
        zip.add("info.json", Array(#"{"files":[{"filename":"assessmentResult.json","timestamp":"2026-11-20T13:03:00.000Z"},{"filename":"answers.json","timestamp":"2026-11-20T13:03:01.482Z"},{"filename":"answers_schema.json","timestamp":"2026-11-20T13:03:01.482Z"}],"item":"sleep","appVersion":"version 1.4, build 212","phoneInfo":"Pixel 6","format":"v2_generic","dataFilename":"answers.json"}"#.utf8))
        return zip.bytes()
    }
}
