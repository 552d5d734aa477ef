import Crypto
import Foundation
import JSONText

/// Participants' resources de-identified, as MyStudies keeps its de-identified FHIR store
/// (docs/fhir.md, De-identified export): direct identifiers and free text dropped, the
/// participant's id replaced by a pseudonym, and every date of a participant shifted by the same
/// secret number of days, so intervals within a participant hold and calendar dates do not.
///
/// Both the pseudonym and the shift come from HMAC-SHA256 under a key only the server holds, over
/// the study and the participant: the same participant is the same pseudonym in every export of
/// the study, and nothing in an export leads back to the participant id without the key.
public struct FHIRDeidentification: Sendable {
    /// Shifts are whole days in `-maxShiftDays...maxShiftDays`, never 0.
    public static let maxShiftDays = 100

    private let key: SymmetricKey

    /// `secret` is the deployment's secret; the de-identification key is derived from it for
    /// this use alone.
    public init(secret: Data) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), info: Data("StudyStack FHIR de-identification".utf8), outputByteCount: 32)
    }

    private func mac(_ purpose: String, studyId: String, participantId: Int64) -> [UInt8] {
        var message: [UInt8] = []
        for part in [purpose, studyId, String(participantId)] {
            let bytes = Array(part.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { message.append(contentsOf: $0) }
            message.append(contentsOf: bytes)
        }
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }

    /// The participant's pseudonym: 32 hex digits, a FHIR id.
    public func pseudonym(studyId: String, participantId: Int64) -> String {
        mac("pseudonym", studyId: studyId, participantId: participantId).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The participant's shift in days: never 0, at most `maxShiftDays` either way.
    public func shiftDays(studyId: String, participantId: Int64) -> Int {
        let bytes = mac("date-shift", studyId: studyId, participantId: participantId)
        let value = Int(UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % (2 * Self.maxShiftDays)
        return value < Self.maxShiftDays ? value - Self.maxShiftDays : value - Self.maxShiftDays + 1
    }

    /// Members that carry free text or direct identifiers: dropped wherever they stand.
    /// A Consent's `sourceAttachment` is the signed PDF, which carries the participant's name and
    /// signature.
    static let dropped: Set<String> = [
        "identifier", "text", "valueString", "valueAttachment", "valueUri", "note", "name", "telecom", "address", "sourceAttachment",
    ]
    /// Members holding a date, dateTime or instant: shifted.
    static let dated: Set<String> = [
        "authored", "lastUpdated", "start", "end", "valueDate", "valueDateTime", "birthDate", "date", "dateTime", "effectiveDateTime",
        "issued",
    ]

    /// `resource`, a participant's (Patient, ResearchSubject, QuestionnaireResponse, Observation or
    /// Consent),
    /// de-identified: references to the participant's Patient and the Patient's own id become the
    /// pseudonym.
    public func apply(_ resource: JSONValue, studyId: String, participantId: Int64) -> JSONValue {
        let pseudonym = pseudonym(studyId: studyId, participantId: participantId)
        let days = shiftDays(studyId: studyId, participantId: participantId)
        let isParticipantResource = ["Patient", "ResearchSubject"].contains(resource["resourceType"]?.string ?? "")
        var result = walk(resource, days: days, patient: "Patient/\(participantId)", pseudonym: pseudonym)
        if isParticipantResource, case .object(var object) = result {
            object["id"] = .string(pseudonym)
            result = .object(object)
        }
        return result
    }

    private func walk(_ value: JSONValue, days: Int, patient: String, pseudonym: String) -> JSONValue {
        switch value {
        case .object(let object):
            var kept = JSONObject()
            for (name, member) in object {
                // A Questionnaire item's `text` is the question, not the participant's; on a
                // QuestionnaireResponse's items it repeats the question too, but is dropped
                // with the rest: free text is never judged, only removed.
                if Self.dropped.contains(name) { continue }
                if name == "reference", member.string?.unicodeScalars.elementsEqual(patient.unicodeScalars) == true {
                    kept[name] = .string("Patient/\(pseudonym)")
                } else if Self.dated.contains(name), let text = member.string {
                    // A date that cannot be shifted exactly (a year, a month) goes.
                    if let shifted = Self.shift(text, days: days) { kept[name] = .string(shifted) }
                } else {
                    let walked = walk(member, days: days, patient: patient, pseudonym: pseudonym)
                    // FHIR has no empty arrays: an answer list left with nothing goes.
                    if case .array(let left) = walked, left.isEmpty { continue }
                    kept[name] = walked
                }
            }
            return .object(kept)
        case .array(let items):
            // An answer left with nothing (its free text removed) is no answer.
            return .array(items.map { walk($0, days: days, patient: patient, pseudonym: pseudonym) }.filter { item in
                if case .object(let object) = item, object.isEmpty { return false }
                return true
            })
        default:
            return value
        }
    }

    /// A FHIR date (`2026-03-01`) or dateTime/instant (`2026-03-01T08:30:00+01:00`) moved by
    /// `days`, its zone and precision kept; nil for a partial date.
    public static func shift(_ text: String, days: Int) -> String? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 10, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-"),
            let year = Int(String(decoding: utf8[0..<4], as: UTF8.self)), let month = Int(String(decoding: utf8[5..<7], as: UTF8.self)),
            let day = Int(String(decoding: utf8[8..<10], as: UTF8.self))
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
            let moved = calendar.date(byAdding: .day, value: days, to: date)
        else { return nil }
        // Before year 1 the calendar counts years back in the era before: such a date has no FHIR form.
        let parts = calendar.dateComponents([.era, .year, .month, .day], from: moved)
        guard parts.era == 1, let newYear = parts.year, let newMonth = parts.month, let newDay = parts.day, (1...9999).contains(newYear)
        else { return nil }
        return String(format: "%04d-%02d-%02d", newYear, newMonth, newDay) + String(decoding: utf8[10...], as: UTF8.self)
    }
}
