import Crypto
import Foundation
import JSONText
import StudyModels

/// FHIR R4 (4.0.1) resources as JSON values, built by the platform's own code. FHIR's JSON has
/// no empty strings, arrays or objects, so the builders drop absent and empty members.
public enum FHIRJSON {
    /// An object of the members given, without those that are nil or empty.
    public static func object(_ members: KeyValuePairs<String, JSONValue?>) -> JSONValue {
        var object = JSONObject()
        for (name, value) in members {
            guard let value, !isEmpty(value) else { continue }
            object[name] = value
        }
        return .object(object)
    }

    /// An array of the values given, or nil when none is left (FHIR has no empty arrays).
    public static func array(_ values: [JSONValue?]) -> JSONValue? {
        let kept = values.compactMap { $0 }.filter { !isEmpty($0) }
        return kept.isEmpty ? nil : .array(kept)
    }

    public static func string(_ text: String?) -> JSONValue? {
        guard let text, !text.isEmpty else { return nil }
        return .string(text)
    }

    public static func number(_ value: Double?) -> JSONValue? {
        guard let value, value.isFinite else { return nil }
        return .number(JSONNumber(value))
    }

    public static func integer(_ value: Int?) -> JSONValue? {
        value.map { .number(JSONNumber(Double($0))) }
    }

    public static func bool(_ value: Bool?) -> JSONValue? { value.map(JSONValue.bool) }

    static func isEmpty(_ value: JSONValue) -> Bool {
        switch value {
        case .null: true
        case .string(let text): text.isEmpty
        case .array(let values): values.isEmpty
        case .object(let members): members.isEmpty
        default: false
        }
    }

    /// `instant` and `dateTime`: UTC to the millisecond (`2026-03-01T08:00:00.000Z`), the rest
    /// cut off: an instant written so stands for its whole millisecond, as FHIR reads a search
    /// value's precision, so a resource's `lastUpdated` (stored to the microsecond) lies within
    /// it. Every resource of a page or an export carries one or two, so it is worked out by plain
    /// arithmetic (`GregorianDays`: proleptic Gregorian, as ISO 8601) rather than a formatter.
    public static func instant(_ date: Date) -> String {
        // Half a microsecond's tolerance: a stored microsecond a double holds just below a
        // millisecond's start is that millisecond.
        let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.0005).rounded(.down)
        // Years 1 to 9999: FHIR's four digits.
        guard milliseconds.isFinite, milliseconds >= -62_135_596_800_000, milliseconds < 253_402_300_800_000 else {
            return date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true)
                .timeSeparator(.colon).timeZone(separator: .omitted)).replacingOccurrences(of: "+0000", with: "Z")
        }
        let total = Int(milliseconds)
        let dayLength = 86_400_000
        let days = total >= 0 ? total / dayLength : (total - dayLength + 1) / dayLength
        let ofDay = total - days * dayLength
        let (year, month, day) = GregorianDays.civil(days: days)
        var text: [UInt8] = []
        text.reserveCapacity(24)
        func digits(_ value: Int, _ count: Int, then separator: Character?) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
            if let separator, let ascii = separator.asciiValue { text.append(ascii) }
        }
        digits(year, 4, then: "-")
        digits(month, 2, then: "-")
        digits(day, 2, then: "T")
        digits(ofDay / 3_600_000, 2, then: ":")
        digits(ofDay / 60_000 % 60, 2, then: ":")
        digits(ofDay / 1_000 % 60, 2, then: ".")
        digits(ofDay % 1_000, 3, then: "Z")
        return String(decoding: text, as: UTF8.self)
    }

    /// `date`: the UTC day (`2026-03-01`).
    public static func day(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash))
    }

    /// A `meta` with the version and time of the last change.
    public static func meta(versionId: String?, lastUpdated: Date?) -> JSONValue? {
        let meta = object(["versionId": string(versionId), "lastUpdated": lastUpdated.map { .string(instant($0)) }])
        return isEmpty(meta) ? nil : meta
    }
}

/// Logical ids (`[A-Za-z0-9\-\.]{1,64}`) for what the platform names otherwise.
public enum FHIRId {
    /// Whether `text` is a FHIR logical id.
    public static func isValid(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.unicodeScalars.allSatisfy { $0.isASCII && (isAlphanumeric($0) || $0 == "-" || $0 == ".") }
    }

    /// A study's id as a FHIR id: study ids are letters, digits, `_` and `-` (at most 64), and
    /// `.` never appears in one, so `_` becomes `.` and the mapping is undone exactly.
    /// The `Binary` id of a consent record's signed PDF.
    public static func consentDocument(_ recordId: Int64) -> String { "consent-\(recordId)" }

    /// The consent record a `Binary` id names, when it names one.
    public static func consentRecord(fromDocument id: String) -> Int64? {
        guard id.hasPrefix("consent-") else { return nil }
        let digits = id.utf8.dropFirst("consent-".utf8.count)
        guard (1...18).contains(digits.count), digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }

    public static func study(_ studyId: String) -> String {
        String(String.UnicodeScalarView(studyId.unicodeScalars.map { $0 == "_" ? "." : $0 }))
    }

    /// The study id a `study(_:)` id stands for; nil when `id` is not one.
    public static func studyId(from id: String) -> String? {
        guard isValid(id), !id.unicodeScalars.contains("_") else { return nil }
        return String(String.UnicodeScalarView(id.unicodeScalars.map { $0 == "." ? "_" : $0 }))
    }

    /// A questionnaire version's id: activity ids and version labels are the study builder's and
    /// may hold any character, and the three together may pass 64, so the id is a digest of
    /// them (32 hex digits of SHA-256 over their lengths and UTF-8 bytes). Clients find a
    /// questionnaire by `url` and `version`, or by identifier, as in any FHIR store.
    public static func questionnaire(studyId: String, activityId: String, version: String) -> String {
        var bytes: [UInt8] = []
        for part in ["Questionnaire", studyId, activityId, version] {
            let utf8 = Array(part.utf8)
            withUnsafeBytes(of: UInt32(utf8.count).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: utf8)
        }
        return SHA256.hash(data: bytes).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    private static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}

/// The URLs StudyStack names its own code systems and identifiers by, under the deployment's
/// public FHIR base (`https://studies.example.org/fhir/r4`).
public struct FHIRNaming: Sendable, Equatable {
    public let base: String

    public init(base: String) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    /// A questionnaire's canonical URL: the same for every version of one activity.
    public func questionnaireURL(studyId: String, activityId: String) -> String {
        "\(base)/Questionnaire/\(FHIRId.study(studyId))/\(percentEncoded(activityId))"
    }

    /// The system of a study's participant ids (the `ParticipantId` researchers see).
    public func participantSystem(studyId: String) -> String { "\(base)/sid/\(FHIRId.study(studyId))/participant" }

    /// The system of the study ids of this deployment.
    public var studySystem: String { "\(base)/sid/study" }

    /// The system of activity ids in a study.
    public func activitySystem(studyId: String) -> String { "\(base)/sid/\(FHIRId.study(studyId))/activity" }

    /// The system of run identifiers (`activityId`, run) in a study.
    public func runSystem(studyId: String) -> String { "\(base)/sid/\(FHIRId.study(studyId))/run" }

    /// The system of response ids in a study: a forwarded response of no run is known by it.
    public func responseSystem(studyId: String) -> String { "\(base)/sid/\(FHIRId.study(studyId))/response" }

    /// The policy a study's consent of one version is given under: its consent document as the
    /// study served it at that version.
    public func consentPolicy(studyId: String, version: String) -> String {
        "\(base)/ResearchStudy/\(FHIRId.study(studyId))/consent/\(percentEncoded(version))"
    }

    /// Where a consent record's signed PDF is read (a `Binary`).
    public func consentDocument(recordId: Int64) -> String { "\(base)/Binary/\(FHIRId.consentDocument(recordId))" }

    /// StudyStack's code system of the active tasks and of each one's results
    /// (`fetalKickCounter`, `fetalKickCounter.count`).
    public var activeTaskSystem: String { "\(base)/CodeSystem/active-task" }

    /// StudyStack's code system for the data-sharing choice of a consent.
    public var dataSharingSystem: String { "\(base)/CodeSystem/data-sharing" }

    /// The code system of a question's choice values.
    public func choiceSystem(studyId: String, activityId: String, key: String) -> String {
        "\(questionnaireURL(studyId: studyId, activityId: activityId))/choices/\(percentEncoded(key))"
    }

    /// RFC 3986's unreserved characters, ASCII only (`CharacterSet.alphanumerics` would keep
    /// every script's letters unencoded); made once, since a character set is costly to build.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? text
    }
}

/// The extensions of the FHIR core specification the mapping uses.
public enum FHIRExtension {
    public static let itemControl = "http://hl7.org/fhir/StructureDefinition/questionnaire-itemControl"
    public static let minValue = "http://hl7.org/fhir/StructureDefinition/minValue"
    public static let maxValue = "http://hl7.org/fhir/StructureDefinition/maxValue"
    public static let maxDecimalPlaces = "http://hl7.org/fhir/StructureDefinition/maxDecimalPlaces"
    public static let sliderStepValue = "http://hl7.org/fhir/StructureDefinition/questionnaire-sliderStepValue"
    public static let unit = "http://hl7.org/fhir/StructureDefinition/questionnaire-unit"
    public static let unitOption = "http://hl7.org/fhir/StructureDefinition/questionnaire-unitOption"
    public static let regex = "http://hl7.org/fhir/StructureDefinition/regex"
    public static let entryFormat = "http://hl7.org/fhir/StructureDefinition/entryFormat"
    public static let optionExclusive = "http://hl7.org/fhir/StructureDefinition/questionnaire-optionExclusive"
    public static let choiceOrientation = "http://hl7.org/fhir/StructureDefinition/questionnaire-choiceOrientation"
    public static let itemControlSystem = "http://hl7.org/fhir/questionnaire-item-control"

    static func make(_ url: String, _ valueName: String, _ value: JSONValue?) -> JSONValue? {
        guard let value else { return nil }
        return FHIRJSON.object(["url": .string(url), valueName: value])
    }

    static func itemControl(_ code: String) -> JSONValue? {
        make(itemControl, "valueCodeableConcept", FHIRJSON.object([
            "coding": .array([FHIRJSON.object(["system": .string(itemControlSystem), "code": .string(code)])]),
        ]))
    }
}
