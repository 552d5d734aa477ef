import Foundation
import JSONText

/// LabKey-era responses taken back from the lists that server shredded them into
/// (`LabKeyListExport`), as the apps sent them to `processResponse`: each row of an activity's
/// list is one response, its answers the row's columns in the order of the activity's steps, a
/// choice question's options, a form's repetitions and an active task's results the rows of the
/// lists below it that point to it (`<list>Id`); each answer's start, end and skip, and the time
/// the response was stored, from `ResponseMetadata`; the participant's app token from
/// `Participant`. The steps come from the activity's design as the deployment's study-metadata API
/// serves it (the studies export), at the version current when the response was stored.
///
/// Each becomes a `MyStudiesStoredResponse` named `labkey:lists/<list>/<Key>` (its original key),
/// which the import stores, processes and counts like every other.
public struct LabKeyResponseRebuild: Sendable {
    /// One version of an activity's design.
    public struct Design: Sendable, Equatable {
        public var version: String
        public var lastModified: Date?
        public var steps: [JSONValue]
    }

    public struct Outcome: Sendable, Equatable {
        public var rowsRead = 0
        public var responses: [MyStudiesStoredResponse] = []
        public var findings: [MoveInFinding] = []
    }

    public let studyId: String
    /// The activities' designs by activity id in any case, each with its id as the study spells it.
    let activities: [ScalarKey: (activityId: String, designs: [Design])]
    let times: LabKeyTimes

    /// The designs come from the study's activity replies; `zone` is the LabKey server's, in which
    /// it wrote every time.
    public init(study: MyStudiesStudyExport.Study, zone: TimeZone) {
        var activities: [ScalarKey: (activityId: String, designs: [Design])] = [:]
        for reply in study.activities {
            guard let activity = reply.reply?["activity"], let steps = activity["steps"]?.array else { continue }
            let lastModified = activity["metadata"]?["lastModified"]?.string.flatMap(WireInstants.instant)
            let design = Design(version: reply.version, lastModified: lastModified, steps: steps)
            activities[Self.name(reply.activityId), default: (reply.activityId, [])].designs.append(design)
        }
        self.studyId = study.studyId
        self.activities = activities
        self.times = LabKeyTimes(zone: zone)
    }

    static func name(_ text: String) -> ScalarKey { ScalarKey(text.lowercased()) }

    /// The columns LabKey or the server add to a list, not an answer's.
    static let systemColumns: Set<ScalarKey> = ["key", "participantid", "starttime", "endtime", "responseid"]

    public func rebuild(_ export: LabKeyListExport) -> Outcome {
        var outcome = Outcome()
        let lists = Dictionary(export.lists.map { (Self.name($0.name), $0) }, uniquingKeysWith: { first, _ in first })
        var walk = Walk(lists: lists, metadata: MetadataIndex(export.responseMetadata), times: times)
        let tokens = Self.tokens(export.participants)
        var unmapped: [String: Int] = [:]
        // The columns of each list that no step of a version reads, found once.
        var unread: [String: [Int]] = [:]
        for list in export.lists {
            guard let activity = activities[Self.name(list.name)] else {
                // A list below an activity's is read with it.
                if !activities.keys.contains(where: { list.name.lowercased().hasPrefix($0.text) }) {
                    outcome.findings.append(finding(list.name, .notImported, "the list is no activity's of this study: not read"))
                }
                continue
            }
            guard let keyColumn = list.column("Key"), let participantColumn = list.column("ParticipantId") else {
                outcome.findings.append(finding(list.name, .notImported, "the list has no Key or ParticipantId column: not read"))
                continue
            }
            for row in list.rows {
                outcome.rowsRead += 1
                let key = row[keyColumn]
                let at = "lists/\(list.name)/\(key)"
                guard let token = tokens[row[participantColumn]] else {
                    outcome.findings.append(
                        finding(at, .notImported, "participant \(row[participantColumn]) has no app token at the source (it is cleared when one withdraws)"))
                    continue
                }
                walk.begin(topKey: key)
                // The times first: they choose the version. A task's answers are all in the list below.
                let family = activity.designs.reduce(into: Set<ScalarKey>()) { $0.formUnion(Self.family(list.name, steps: $1.steps)) }
                let stored = walk.metadata.created(lists: family, topKey: key).compactMap(times.instant).max()
                guard let received = stored else {
                    outcome.findings.append(finding(at, .notImported, "ResponseMetadata holds no row of it: when it was stored is unknown"))
                    continue
                }
                let design = Self.design(activity.designs, at: received)
                let results = walk.results(design.steps, list: list, row: row)
                let place = "\(list.name)\u{0}\(design.version)"
                if unread[place] == nil { unread[place] = Self.unreadColumns(of: list, by: design) }
                for index in unread[place] ?? [] where !row[index].isEmpty {
                    unmapped["lists/\(list.name)#\(list.columns[index]) (version \(design.version))", default: 0] += 1
                }
                let fields: [(String, JSONValue)] = [
                    ("participantId", .string(token)), ("studyId", .string(studyId)), ("activityId", .string(activity.activityId)),
                    ("version", .string(design.version)), ("results", .array(results)),
                    ("createdTimestamp", .string(String(Int64((received.timeIntervalSince1970 * 1000).rounded())))),
                ]
                outcome.responses.append(
                    MyStudiesStoredResponse(studyId: studyId, document: "labkey:" + at, createTime: nil, fields: .object(JSONObject(pairs: fields))))
            }
        }
        for (at, count) in unmapped.sorted(by: { $0.key < $1.key }) {
            outcome.findings.append(finding(at, .changed, "\(count) values of a column that is no step of the design: not moved"))
        }
        for (place, count) in walk.problems.sorted(by: { $0.key < $1.key }) {
            let parts = place.split(separator: "|", maxSplits: 1).map(String.init)
            outcome.findings.append(finding(parts.first ?? place, .changed, "\(count) values are \(parts.count > 1 ? parts[1] : "unreadable"): moved as empty"))
        }
        return outcome
    }

    func finding(_ at: String, _ effect: MoveInFinding.Effect, _ message: String) -> MoveInFinding {
        MoveInFinding(studyId: studyId, at: at, effect: effect, message: message)
    }

    /// The lists a response to an activity is stored in: its own and those its choice questions,
    /// forms and tasks made below it.
    static func family(_ list: String, steps: [JSONValue]) -> Set<ScalarKey> {
        var names: Set<ScalarKey> = [name(list)]
        for step in steps {
            guard let key = step["key"]?.string, let type = step["resultType"]?.string.map(name) else { continue }
            if type == "grouped" {
                names.formUnion(family(list + key, steps: step["steps"]?.array ?? []))
            } else if type == "textchoice" || Walk.taskColumns[type] != nil {
                names.insert(name(list + key))
            }
        }
        return names
    }

    /// The columns of `list` that are neither LabKey's nor the server's and that no step of
    /// `design` reads.
    static func unreadColumns(of list: LabKeyListExport.Table, by design: Design) -> [Int] {
        let keys = Set(design.steps.compactMap { $0["key"]?.string.map(name) })
        return list.columns.indices.filter { index in
            let column = name(list.columns[index])
            return !systemColumns.contains(column) && !keys.contains(column)
        }
    }

    /// `RowId` to app token; a participant who withdrew has none.
    static func tokens(_ participants: LabKeyListExport.Table) -> [String: String] {
        guard let rowId = participants.column("RowId"), let token = participants.column("AppToken") else { return [:] }
        var tokens: [String: String] = [:]
        for row in participants.rows where !row[token].isEmpty { tokens[row[rowId]] = row[token] }
        return tokens
    }

    /// The version current when the response was stored: the last changed at or before then, else
    /// the earliest; without dates, the first the export lists (the current one).
    static func design(_ designs: [Design], at received: Date) -> Design {
        let dated = designs.compactMap { design in design.lastModified.map { (date: $0, design: design) } }.sorted { $0.date < $1.date }
        guard let earliest = dated.first else { return designs[0] }
        return (dated.last { $0.date <= received } ?? earliest).design
    }
}

/// `ResponseMetadata` by the list and the response (the key of its row in its activity's list)
/// each row belongs to, in the order the server wrote them (`RowId`).
struct MetadataIndex {
    struct Entry {
        var field: ScalarKey
        var start: String
        var end: String
        var skipped: Bool
        var created: String
    }

    struct Place: Hashable {
        var list: ScalarKey
        var topKey: String
    }

    var entries: [Place: [Entry]] = [:]

    init(_ table: LabKeyListExport.Table) {
        let column = { (name: String) in table.column(name) }
        guard let list = column("ListName"), let activity = column("ActivityId"), let field = column("FieldName") else { return }
        let start = column("StartTime"), end = column("EndTime"), skipped = column("Skipped"), created = column("Created")
        var rows = table.rows
        if let rowId = column("RowId") { rows.sort { (Int64($0[rowId]) ?? 0) < (Int64($1[rowId]) ?? 0) } }
        for row in rows {
            let entry = Entry(
                field: LabKeyResponseRebuild.name(row[field]), start: start.map { row[$0] } ?? "", end: end.map { row[$0] } ?? "",
                skipped: skipped.map { row[$0].lowercased() == "true" } ?? false, created: created.map { row[$0] } ?? "")
            entries[Place(list: LabKeyResponseRebuild.name(row[list]), topKey: row[activity]), default: []].append(entry)
        }
    }

    /// When the rows of a response were stored, in the lists it was stored in.
    func created(lists: Set<ScalarKey>, topKey: String) -> [String] {
        lists.flatMap { entries[Place(list: $0, topKey: topKey)] ?? [] }.map(\.created).filter { !$0.isEmpty }
    }
}
