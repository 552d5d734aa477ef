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
}
