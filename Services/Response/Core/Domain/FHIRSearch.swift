import FHIR
import Foundation
import StudyModels

/// A FHIR search as the API takes it (docs/fhir.md, Search): the parameters of one resource type,
/// read strictly. A parameter the API does not support is refused rather than ignored, so a
/// client never mistakes a wider result for the one it asked for.
package struct FHIRSearch: Sendable, Equatable {
    /// The date prefixes taken (FHIR's `eq`, a whole range, is not).
    package enum Comparison: String, Sendable, Equatable {
        case ge, gt, le, lt
    }

    /// The resource types that can be searched, and each one's parameters.
    package static let parameters: [String: [String]] = [
        "Patient": ["_id", "identifier", "_lastUpdated", "_count", "_summary", "_revinclude"],
        "ResearchSubject": ["_id", "identifier", "status", "_lastUpdated", "_count", "_summary", "_include"],
        "QuestionnaireResponse": [
            "_id", "subject", "patient", "questionnaire", "identifier", "status", "_lastUpdated", "_count", "_summary", "_include",
        ],
        "Questionnaire": ["_id", "url", "identifier", "version", "status", "_count", "_summary"],
        "Consent": ["_id", "patient", "status", "_lastUpdated", "_count", "_summary", "_include"],
        "Observation": ["_id", "subject", "patient", "code", "status", "_lastUpdated", "_count", "_summary", "_include"],
    ]
    /// What `_include` and `_revinclude` take, per type.
    package static let includes: [String: [String]] = [
        "ResearchSubject": ["ResearchSubject:individual"],
        "QuestionnaireResponse": ["QuestionnaireResponse:subject"],
        "Consent": ["Consent:patient"],
        "Observation": ["Observation:subject"],
    ]
    package static let revIncludes: [String: [String]] = ["Patient": ["ResearchSubject:individual"]]
    package static let defaultCount = 50
    package static let maxCount = 500
    /// Values of one parameter: a `_lastUpdated` range is two; more is a request to refuse.
    static let maxValues = 4

    package var type: String
    /// Resources after this id, in the order of ids (the next page's cursor).
    package var after: Int64?
    package var count = defaultCount
    package var summaryCount = false
    /// `_id` or `subject`/`patient` (a participant id) as numbers.
    package var ids: [Int64]?
    /// `_id` of a type whose ids are not numbers (Questionnaire).
    package var textIds: [String]?
    package var participant: Int64?
    /// `questionnaire`: the activity and, when given, the exact version.
    package var activityId: String?
    package var version: String?
    /// `identifier`: the value, within the type's own system.
    package var identifier: String?
    package var status: String?
    /// `code` of an Observation: the active task.
    package var code: TaskType?
    package var lastUpdated: [(Comparison, Date)] = []
    package var include = false
    package var revInclude = false
    /// Two parameters that contradict each other: the search matches nothing.
    package var nothing = false

    package static func == (lhs: FHIRSearch, rhs: FHIRSearch) -> Bool {
        lhs.type == rhs.type && lhs.after == rhs.after && lhs.count == rhs.count && lhs.summaryCount == rhs.summaryCount
            && lhs.ids == rhs.ids && lhs.textIds == rhs.textIds && lhs.participant == rhs.participant && lhs.activityId == rhs.activityId
            && lhs.version == rhs.version && lhs.identifier == rhs.identifier && lhs.status == rhs.status && lhs.code == rhs.code
            && lhs.lastUpdated.map(\.0) == rhs.lastUpdated.map(\.0) && lhs.lastUpdated.map(\.1) == rhs.lastUpdated.map(\.1)
            && lhs.include == rhs.include && lhs.revInclude == rhs.revInclude && lhs.nothing == rhs.nothing
    }

    /// Reads the query of a search of `type`; `naming` tells the systems and canonical URLs that
    /// `identifier` and `questionnaire` name.
    package static func parse(type: String, query: [(name: String, value: String)], studyId: String, naming: FHIRNaming)
        throws(FHIRRefusal) -> FHIRSearch
    {
        guard let allowed = parameters[type] else { throw .notSearchable(type) }
        var search = FHIRSearch(type: type)
        var seen: [String: Int] = [:]
        for (name, value) in query {
            if name == "_cursor" {
                guard let after = number(value) else { throw .invalidSearch("_cursor is not one this server gave") }
                search.after = after
                continue
            }
            guard allowed.contains(name) else {
                throw .invalidSearch("\(type) is not searched by \(name) here; its parameters are \(allowed.joined(separator: ", "))")
            }
            seen[name, default: 0] += 1
            guard seen[name]! <= (name == "_lastUpdated" ? 2 : 1) else { throw .invalidSearch("\(name) is given more than once") }
            switch name {
            case "_count":
                guard let count = Int(value), (0...maxCount).contains(count) else {
                    throw .invalidSearch("_count must be 0 to \(maxCount)")
                }
                search.count = count
            case "_summary":
                guard value == "count" else { throw .invalidSearch("_summary supports count only") }
                search.summaryCount = true
            case "_id":
                let ids = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                guard (1...maxCount).contains(ids.count) else { throw .invalidSearch("_id takes 1 to \(maxCount) ids") }
                // An id that cannot be one of this type's matches nothing, as FHIR's _id does.
                switch type {
                case "Questionnaire": search.textIds = ids.filter(FHIRId.isValid)
                // An Observation's id names its response (`{response}-{n}`): the responses are
                // searched, and the page keeps the Observations named.
                case "Observation":
                    search.textIds = ids.filter { TaskObservations.parse(id: $0) != nil }
                    search.ids = ids.compactMap { TaskObservations.parse(id: $0)?.responseId }
                default: search.ids = ids.compactMap(number)
                }
            case "subject", "patient":
                guard search.participant == nil else { throw .invalidSearch("give subject or patient, not both") }
                let reference = value.hasPrefix("Patient/") ? String(value.dropFirst("Patient/".count)) : value
                guard let id = number(reference) else { throw .invalidSearch("\(name) must be Patient/{id}") }
                search.participant = id
            case "questionnaire", "url":
                // `questionnaire` is a reference to a canonical with its version after `|`;
                // `url` is the canonical alone (its version is the `version` parameter).
                let parts = value.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let prefix = naming.questionnaireURL(studyId: studyId, activityId: "")
                guard parts[0].hasPrefix(prefix), parts[0].count > prefix.count, name == "questionnaire" || parts.count == 1,
                    let activityId = String(parts[0].dropFirst(prefix.count)).removingPercentEncoding
                else {
                    throw .invalidSearch(
                        "\(name) must be a canonical URL of this study's questionnaires (\(prefix)...)"
                            + (name == "questionnaire" ? ", with |version if wanted" : ""))
                }
                guard search.activityId == nil || search.activityId == activityId else { search.nothing = true; continue }
                search.activityId = activityId
                if parts.count == 2 { search.version = parts[1] }
            case "version":
                guard !value.isEmpty, value.utf8.count <= 64 else { throw .invalidSearch("version needs a value") }
                search.version = value
            case "identifier":
                let parts = value.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let system =
                    switch type {
                    case "QuestionnaireResponse": naming.runSystem(studyId: studyId)
                    case "Questionnaire": naming.activitySystem(studyId: studyId)
                    default: naming.participantSystem(studyId: studyId)
                    }
                if parts.count == 2, !parts[0].isEmpty, parts[0] != system {
                    throw .invalidSearch("identifier's system must be \(system)")
                }
                guard let value = parts.last, !value.isEmpty, value.utf8.count <= 512 else { throw .invalidSearch("identifier needs a value") }
                if type == "Questionnaire" {
                    // A questionnaire's identifier is its activity id.
                    guard search.activityId == nil || search.activityId == value else { search.nothing = true; continue }
                    search.activityId = value
                } else {
                    search.identifier = value
                }
            case "code":
                // `[system|]code`, in StudyStack's code system of active tasks.
                let parts = value.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let system = naming.activeTaskSystem
                if parts.count == 2, !parts[0].isEmpty, !parts[0].unicodeScalars.elementsEqual(system.unicodeScalars) {
                    throw .invalidSearch("code's system must be \(system)")
                }
                let code = parts.last ?? ""
                guard let task = TaskType.allCases.first(where: { $0.rawValue.unicodeScalars.elementsEqual(code.unicodeScalars) }) else {
                    throw .invalidSearch("code must be an active task: \(TaskType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                search.code = task
            case "status":
                search.status = value
            case "_lastUpdated":
                guard let (comparison, date) = dateComparison(value) else {
                    throw .invalidSearch("_lastUpdated must be a prefix (ge, gt, le or lt) and a date or dateTime, like ge2026-03-01")
                }
                search.lastUpdated.append((comparison, date))
            case "_include":
                guard includes[type]?.contains(value) == true else {
                    throw .invalidSearch("_include takes \(includes[type]?.joined(separator: ", ") ?? "nothing") for \(type)")
                }
                search.include = true
            case "_revinclude":
                guard revIncludes[type]?.contains(value) == true else {
                    throw .invalidSearch("_revinclude takes \(revIncludes[type]?.joined(separator: ", ") ?? "nothing") for \(type)")
                }
                search.revInclude = true
            default:
                throw .invalidSearch("\(name) is not supported")
            }
        }
        return search
    }

    /// `_lastUpdated` as a half-open range of stored times, `from` (inclusive) to `before`
    /// (exclusive), each nil when unbounded, on the millisecond grid the resources' `lastUpdated`
    /// is shown on (`FHIRJSON.instant`): each comparison holds for the time as shown. So a client
    /// that asks for what changed after the `lastUpdated` it was given is not given that resource
    /// again, though it was stored to the microsecond; and a range on one column stays one an
    /// index serves.
    package var lastUpdatedRange: (from: Date?, before: Date?) {
        var from: Int64?
        var before: Int64?
        for (comparison, date) in lastUpdated {
            let down = PreciseInstants.milliseconds(date, up: false)
            let up = PreciseInstants.milliseconds(date, up: true)
            switch comparison {
            case .gt: from = max(from ?? down + 1, down + 1)
            case .ge: from = max(from ?? up, up)
            case .lt: before = min(before ?? up, up)
            case .le: before = min(before ?? down + 1, down + 1)
            }
        }
        return (from.map { PreciseInstants.instant(milliseconds: $0) }, before.map { PreciseInstants.instant(milliseconds: $0) })
    }

    static func number(_ text: String) -> Int64? {
        guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(text)
    }

    /// `ge2026-03-01`, `lt2026-03-01T08:00:00Z`: a comparison and the instant it starts at (a day
    /// is its first instant in UTC).
    static func dateComparison(_ text: String) -> (Comparison, Date)? {
        guard let comparison = Comparison(rawValue: String(text.prefix(2))),
            let converted = FHIRDates.dateTime(String(text.dropFirst(2)))
        else { return nil }
        let full = converted.count == 10 ? converted + "T00:00:00Z" : converted
        let date = (try? Date(full, strategy: .iso8601))
            ?? (try? Date(full, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        guard let date else { return nil }
        return (comparison, date)
    }
}
