import Crypto
import Foundation

/// A run of a Sage check-in survey as Sage's own clients carry it to the server (docs/sage.md, What
/// Sage's clients do): archived as each platform's builder archives it, sealed as each platform
/// seals it, and uploaded with the request and headers each platform's upload code sends. Shapes
/// read from `Sage-Bionetworks/BridgeClientKMM` (`AssessmentArchiveBuilder.swift`,
/// `AssessmentArchiver.kt`, `UploadFile.kt`, `UploadManager.swift`), the answers' types from
/// `Sage-Bionetworks/AssessmentModelKMM` (`AnswerType.kt`, `InputItems.kt`,
/// `ChoiceQuestionViewModel.swift`), the envelopes from `Sage-Bionetworks/CMSSupport` (iOS:
/// `CMS_encrypt` with AES-128-CBC and `CMS_STREAM`, written by `i2d_CMS_bio_stream`) and
/// Sage's `AndroidStudyUploadEncryptor` (Bouncy Castle's `CMSEnvelopedDataStreamGenerator`, AES-256-CBC):
/// both BER with indefinite lengths, which `openssl cms -encrypt -stream` writes too.
public enum SageClientRun {
    public enum Platform: String, Sendable, CaseIterable {
        case ios, android
    }

    public static let assessmentIdentifier = "checkin"

    /// A question of every input the MyStudies import takes (integer, number, year, a likert
    /// scale, a time of day, a duration, text), single and multiple choices with "other" free
    /// text, a yes/no choice, and a section.
    public static let assessment = """
        {"type": "assessment", "identifier": "checkin", "title": "Evening check-in", "steps": [
          {"type": "instruction", "identifier": "intro", "title": "A few questions about today"},
          {"type": "simpleQuestion", "identifier": "hours", "title": "Hours slept", "inputItem": {"type": "integer", "formatOptions": {"minimumValue": 0, "maximumValue": 24}}},
          {"type": "simpleQuestion", "identifier": "weight", "title": "Weight (kg)", "inputItem": {"type": "number", "formatOptions": {"minimumValue": 20, "maximumValue": 300, "maximumFractionDigits": 1}}},
          {"type": "simpleQuestion", "identifier": "born", "title": "Year of birth", "inputItem": {"type": "year", "formatOptions": {"minimumYear": 1900, "allowFuture": false}}},
          {"type": "simpleQuestion", "identifier": "pain", "title": "Pain today", "uiHint": "likert", "inputItem": {"type": "integer", "formatOptions": {"minimumValue": 0, "maximumValue": 10}}},
          {"type": "simpleQuestion", "identifier": "bedtime", "title": "Bedtime", "inputItem": {"type": "time"}},
          {"type": "simpleQuestion", "identifier": "nap", "title": "Naps", "inputItem": {"type": "duration"}},
          {"type": "simpleQuestion", "identifier": "notes", "title": "Anything else?", "optional": true, "inputItem": {"type": "string", "characterLimit": 250}},
          {"type": "section", "identifier": "mood", "steps": [
            {"type": "choiceQuestion", "identifier": "feeling", "title": "How do you feel?", "baseType": "integer", "singleChoice": true,
             "choices": [{"value": 1, "text": "Tired"}, {"value": 2, "text": "Rested"}, {"value": 3, "text": "Great"}]},
            {"type": "choiceQuestion", "identifier": "factors", "title": "What kept you up?", "baseType": "string", "singleChoice": false,
             "choices": [{"value": "noise", "text": "Noise"}, {"value": "light", "text": "Light"}, {"value": "worry", "text": "Worry"}],
             "other": {"type": "string", "fieldLabel": "Something else"}},
            {"type": "choiceQuestion", "identifier": "cause", "title": "What mattered most?", "baseType": "string", "singleChoice": true,
             "choices": [{"value": "noise", "text": "Noise"}, {"value": "worry", "text": "Worry"}],
             "other": {"type": "string"}}
          ]},
          {"type": "choiceQuestion", "identifier": "rested", "title": "Do you feel rested?", "baseType": "boolean", "singleChoice": true,
           "choices": [{"value": true, "text": "Yes"}, {"value": false, "text": "No"}]}
        ]}
        """

    /// One answered question: its path, the answer type the result carries (as each platform's
    /// model encodes it), its value, and the text `answers.json` holds for it on each platform.
    struct Answer {
        var path: [String]
        var type: [String: Any]
        var value: Any
        var question: String
    }

    /// The participant's answers, the same on both platforms. The "other" free texts hold commas.
    static func answers(_ platform: Platform) -> [Answer] {
        [
            Answer(path: ["hours"], type: ["type": "integer"], value: 7, question: "Hours slept"),
            // Kotlin's `AnswerType.Decimal` carries the item's fraction digits; Swift's number does not.
            Answer(path: ["weight"], type: platform == .android ? ["type": "number", "significantDigits": 1] : ["type": "number"], value: 72.5, question: "Weight (kg)"),
            Answer(path: ["born"], type: ["type": "integer"], value: 1984, question: "Year of birth"),
            Answer(path: ["pain"], type: ["type": "integer"], value: 3, question: "Pain today"),
            Answer(path: ["bedtime"], type: ["type": "time", "codingFormat": "HH:mm:SS.SSS"], value: "22:45:00.000", question: "Bedtime"),
            Answer(path: ["nap"], type: ["type": "duration", "displayUnits": ["hour", "minute"], "significantDigits": 0], value: 1200, question: "Naps"),
            Answer(path: ["notes"], type: ["type": "string"], value: "woke at 4, then slept", question: "Anything else?"),
            Answer(path: ["mood", "feeling"], type: ["type": "integer"], value: 2, question: "How do you feel?"),
            Answer(path: ["mood", "factors"], type: ["type": "array", "baseType": "string"], value: ["noise", "light", "a dog barking, twice"], question: "What kept you up?"),
            Answer(path: ["mood", "cause"], type: ["type": "string"], value: "the neighbours' party, again", question: "What mattered most?"),
            Answer(path: ["rested"], type: ["type": "boolean"], value: true, question: "Do you feel rested?"),
        ]
    }

    /// What the study's tables hold after the run is processed: the activity's row by column,
    /// and each choice question's rows as (choice, `_Other_Text`).
    public static let expectedRow: [String: ExpectedCell] = [
        "hours": .number(7), "weight": .number(72.5), "born": .number(1984), "pain": .number(3),
        "bedtime": .text("22:45:00.000"), "nap": .number(1200), "notes": .text("woke at 4, then slept"),
    ]
    public static let expectedChoices: [String: [(String, String?)]] = [
        "mood_feeling": [("2", nil)],
        "mood_factors": [("noise", nil), ("light", nil), ("other", "a dog barking, twice")],
        "mood_cause": [("other", "the neighbours' party, again")],
        "rested": [("true", nil)],
    ]

    public enum ExpectedCell: Equatable, Sendable {
        case number(Double)
        case text(String)
    }

    // MARK: The archive

    /// Times as each platform writes them: iOS with the phone's offset and milliseconds, Android
    /// as a UTC instant with as many fraction digits as the clock gave.
    static func time(_ platform: Platform, second: Int) -> String {
        let minute = second / 60, rest = second % 60
        switch platform {
        case .ios: return String(format: "2026-11-20T20:%02d:%02d.000-05:00", minute, rest)
        case .android: return String(format: "2026-11-21T01:%02d:%02d.%09dZ", minute, rest, 482_913_557)
        }
    }

    static func result(_ platform: Platform, runId: String, motion: Bool) -> [String: Any] {
        var second = 0
        func stamped(_ object: [String: Any]) -> [String: Any] {
            var object = object
            object["startDate"] = time(platform, second: second)
            second += 5
            object["endDate"] = time(platform, second: second)
            return object
        }
        func answered(_ answer: Answer) -> [String: Any] {
            stamped([
                "type": "answer", "identifier": answer.path.last!, "answerType": answer.type, "value": answer.value,
                "questionText": answer.question,
            ])
        }
        let all = answers(platform)
        var top: [[String: Any]] = [stamped(["type": "base", "identifier": "intro"])]
        top += all.filter { $0.path.count == 1 && $0.path != ["rested"] }.map(answered)
        // The section spans its questions.
        let sectionStart = time(platform, second: second)
        let mood = all.filter { $0.path.count == 2 }.map(answered)
        top.append([
            "type": "section", "identifier": "mood", "stepHistory": mood, "startDate": sectionStart, "endDate": time(platform, second: second),
        ])
        top += all.filter { $0.path == ["rested"] }.map(answered)
        var result: [String: Any] = [
            "type": "assessment", "identifier": assessmentIdentifier, "assessmentIdentifier": assessmentIdentifier,
            "taskRunUUID": runId, "startDate": time(platform, second: 0), "endDate": time(platform, second: second),
            "stepHistory": top,
        ]
        if motion {
            result["asyncResults"] = [[
                "type": "file", "identifier": "motion", "relativePath": "motion.json", "contentType": "application/json",
                "jsonSchema": motionSchema, "startUptime": 81_234.5,
                "startDate": time(platform, second: 0), "endDate": time(platform, second: second),
            ]]
        }
        return result
    }

    static let resultSchema = "https://sage-bionetworks.github.io/mobile-client-json/schemas/v2/AssessmentResultObject.json"
    static let motionSchema = "https://sage-bionetworks.github.io/mobile-client-json/schemas/v2/MotionRecord.json"

    /// A motion recording of `samples` readings (accelerometer, gyro and attitude in turn), as
    /// the recorder writes them: noisy numbers, which a ZIP does not shrink much.
    public static func motion(samples: Int) -> [UInt8] {
        var state: UInt64 = 0x5DEE_CE66D
        func noise() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(Int64(bitPattern: state >> 11) % 2_000_000) / 1_000_000
        }
        let sensors = ["accelerometer", "gyro", "attitude"]
        var text = #"[{"uptime":81234.5,"timestamp":0,"stepPath":"checkin/motion","timestampDate":"2026-11-20T20:00:00.000-05:00"}"#
        text.reserveCapacity(samples * 150)
        for index in 0..<samples {
            let uptime = 81_234.5 + Double(index) / 100
            text += #",{"uptime":\#(uptime),"timestamp":\#(Double(index) / 100),"stepPath":"checkin/motion","sensorType":"\#(sensors[index % 3])","x":\#(noise()),"y":\#(noise()),"z":\#(noise())}"#
        }
        return Array((text + "]").utf8)
    }

    static func json(_ object: Any, _ platform: Platform) -> [UInt8] {
        // iOS: JSONSerialization pretty-printed with sorted keys; Android: kotlinx compact.
        let options: JSONSerialization.WritingOptions =
            platform == .ios ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.withoutEscapingSlashes]
        return Array((try? JSONSerialization.data(withJSONObject: object, options: options)) ?? Data())
    }

    /// `answers.json` as each builder flattens the answers: iOS joins an array's values' text
    /// with `,`; Android joins each value's JSON text.
    static func flatAnswers(_ platform: Platform) -> [String: Any] {
        var flat: [String: Any] = [:]
        for answer in answers(platform) {
            let key = answer.path.joined(separator: "_")
            if let values = answer.value as? [String] {
                flat[key] = platform == .ios ? values.joined(separator: ",") : values.map { "\"\($0)\"" }.joined(separator: ",")
            } else {
                flat[key] = answer.value
            }
        }
        return flat
    }

    /// The archive of one run as `platform`'s builder writes it, with a motion recording of
    /// `motionSamples` readings when not zero.
    public static func archive(_ platform: Platform, runId: String = UUID().uuidString, motionSamples: Int = 300) -> [UInt8] {
        let end = time(platform, second: 5 * 13)
        func listed(_ name: String, identifier: String? = nil, schema: String?) -> [String: Any] {
            var info: [String: Any] = ["filename": name, "timestamp": end, "contentType": "application/json"]
            if let identifier { info["identifier"] = identifier }
            if let schema { info["jsonSchema"] = schema }
            return info
        }
        let answersSchema: [String: Any] = [
            "$id": "answers_schema.json", "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "title": "answers_schema", "description": assessmentIdentifier,
            "properties": Dictionary(uniqueKeysWithValues: answers(platform).map { answer -> (String, Any) in
                let type = answer.value is Int ? "integer" : answer.value is Double ? "number" : answer.value is Bool ? "boolean" : "string"
                return (answer.path.joined(separator: "_"), ["type": type, "description": answer.question])
            }),
        ]
        var files: [[String: Any]] = []
        // iOS's BridgeArchiver adds entries with ZIPFoundation's default, stored; Android's
        // `Archive` writes through `ZipOutputStream`, deflated.
        var writer = ZipWriter()
        func add(_ name: String, _ bytes: [UInt8]) { writer.add(name, bytes, deflate: platform == .android) }
        let resultFile = json(result(platform, runId: runId, motion: motionSamples > 0), platform)
        let resultInfo = listed("assessmentResult.json", identifier: assessmentIdentifier, schema: resultSchema)
        let answersInfo = listed("answers.json", schema: "answers_schema.json")
        let motionInfo = listed("motion.json", identifier: "motion", schema: motionSchema)
        // Each builder's order: iOS adds file results, then answers.json, then the result;
        // Android the result first.
        switch platform {
        case .ios:
            if motionSamples > 0 {
                add("motion.json", motion(samples: motionSamples))
                files.append(motionInfo)
            }
            add("answers.json", json(flatAnswers(platform), platform))
            add("answers_schema.json", json(answersSchema, platform))
            files.append(answersInfo)
            add("assessmentResult.json", resultFile)
            files.append(resultInfo)
        case .android:
            add("assessmentResult.json", resultFile)
            files.append(resultInfo)
            if motionSamples > 0 {
                add("motion.json", motion(samples: motionSamples))
                files.append(motionInfo)
            }
            add("answers.json", json(flatAnswers(platform), platform))
            add("answers_schema.json", json(answersSchema, platform))
            files.append(answersInfo)
        }
        var metadata: [String: Any] = [
            "appName": "Check-in", "files": files,
            "appVersion": platform == .ios ? "1.4 (212)" : "version 1.4, build 212",
            "deviceInfo": platform == .ios ? "iPhone15,2; iOS/17.1" : "oriole Pixel 6; Android/14",
            "deviceTypeIdentifier": platform == .ios ? "iPhone15,2" : "Pixel 6",
        ]
        if platform == .ios {
            metadata["scheduledActivityGuid"] = "2fJ9yq8bKzNCmVE3gH5K1w"
            metadata["scheduledOn"] = time(platform, second: 0)
        }
        add("metadata.json", json(metadata, platform))
        add("info.json", json([
            "files": files.map { ["filename": $0["filename"] ?? "", "timestamp": end] }, "item": assessmentIdentifier,
            "format": "v2_generic", "dataFilename": "answers.json", "appVersion": metadata["appVersion"] ?? "",
            "phoneInfo": metadata["deviceTypeIdentifier"] ?? "",
        ] as [String: Any], platform))
        return writer.bytes()
    }

    // MARK: Sealed and uploaded

    /// `archive` sealed for the study's certificate as `platform` seals it.
    public static func seal(_ archive: [UInt8], for platform: Platform, certificatePEM: String) throws -> [UInt8] {
        try OpenSSLCMS.encrypt(
            archive, certificatePEM: certificatePEM, cipher: platform == .ios ? "-aes-128-cbc" : "-aes-256-cbc", stream: true)
    }

    public static func md5(_ bytes: [UInt8]) -> String { Data(Insecure.MD5.hash(data: bytes)).base64EncodedString() }

    /// `POST /v3/uploads`'s body as `UploadFile.getUploadRequest` builds it: the file's name, its
    /// length and MD5, `application/zip`, `encrypted`, the adherence record's metadata, and the
    /// serializer's `type`.
    public static func uploadRequest(_ sealed: [UInt8], runId: String) -> [String: Any] {
        [
            "name": "\(runId).zip", "contentLength": sealed.count, "contentMd5": md5(sealed), "contentType": "application/zip",
            "encrypted": true, "type": "UploadRequest",
            "metadata": ["instanceGuid": "2fJ9yq8bKzNCmVE3gH5K1w", "eventTimestamp": "2026-11-01T09:00:00.000Z", "startedOn": "2026-11-21T01:00:00.000Z"],
        ]
    }

    /// The PUT's headers as `UploadFile.getS3RequestHeaders` gives them.
    public static func putHeaders(_ sealed: [UInt8]) -> [(String, String)] {
        [("Content-Length", "\(sealed.count)"), ("Content-Type", "application/zip"), ("Content-MD5", md5(sealed))]
    }
}
