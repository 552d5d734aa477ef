import Foundation
import JSONText

/// Checks a schema app protocol (the JSON the schema app downloads: `properties` and `modules` of
/// sections and questions) against what the app needs to run it, and writes it in the form the
/// current app reads. The app itself checks only that `properties.study_id` and `modules` exist;
/// everything else here is what makes it crash, show nothing, or lose answers when it is wrong
/// (docs/schema-protocols.md lists each rule).
///
/// Errors stop an import. Warnings are kept with it: the protocol works, but not as its author may
/// think (a module no condition schedules, answers one question overwrites). What the app of
/// today would misread is written the way it reads it (`normalized`), and said in a warning.
public struct SchemaProtocolCheck: Sendable {
    public var errors: [ValidationProblem] = []
    public var warnings: [ValidationProblem] = []
    /// The protocol as the current app reads it (`submit_txt` as `submit_text`, a `multi` without
    /// `radio` or `modal` given `false`, `video` and `audio` questions as `media`); nil when the
    /// text is not a JSON object.
    public var normalized: JSONValue?

    /// The types of question the app draws, and the types of module it has icons for.
    public static let questionTypes: Set<String> = [
        "instruction", "text", "datetime", "yesno", "slider", "multi", "media", "external", "file",
    ]
    public static let moduleTypes: Set<String> = ["survey", "info", "video", "audio"]
    /// Question types whose answer can show or hide another question (`hide_id`).
    static let branchingTriggers: Set<String> = ["multi", "yesno", "text", "slider"]
    /// Below this, `timeout_after` (milliseconds, whatever the schema paper says) expires a task
    /// before a participant can open it.
    static let shortestUsefulTimeout = 60_000.0
    /// The most minutes a random alert moves either side of its time: a day.
    public static let longestRandomInterval = 1_440

    /// Checks protocol text: text that is not JSON is one error, with the byte where reading stopped.
    public static func check(text bytes: some Collection<UInt8>) -> SchemaProtocolCheck {
        do {
            return check(try JSONValue.parse(bytes, budget: .schemaProtocol))
        } catch {
            var check = SchemaProtocolCheck()
            check.errors.append(ValidationProblem(pointer: "", message: "the protocol is not valid JSON: \(error.description)"))
            return check
        }
    }

    public static func check(_ value: JSONValue) -> SchemaProtocolCheck {
        var check = SchemaProtocolCheck()
        guard case .object(var top) = value else {
            check.error("", "a protocol is a JSON object with properties and modules")
            return check
        }
        guard case .object(let properties)? = top["properties"] else {
            check.error("/properties", "must be an object (the study's id, conditions and texts)")
            return check
        }
        let conditions = check.properties(properties)
        guard case .array(var modules)? = top["modules"] else {
            check.error("/modules", "must be an array of modules")
            return check
        }
        if modules.isEmpty { check.warn("/modules", "has no modules: participants would have nothing to do") }
        let uuids = modules.map { $0["uuid"]?.text }
        for (index, module) in modules.enumerated() {
            modules[index] = check.module(module, at: "/modules/\(index)", conditions: conditions, uuids: uuids)
        }
        check.duplicateModuleIds(uuids)
        check.duplicateQuestionIdsAcrossModules(modules)
        top["modules"] = .array(modules)
        check.normalized = .object(top)
        return check
    }

    // MARK: - properties

    /// Checks `properties`; returns the conditions (nil when they are not a list of names).
    mutating func properties(_ properties: JSONObject) -> [String]? {
        if properties["study_id"]?.nonEmptyString == nil {
            error("/properties/study_id", "must be a non-empty string: the app sends it back with every answer")
        }
        var conditions: [String]?
        switch properties["conditions"] {
        case nil:
            error("/properties/conditions", "is required (an empty list is allowed): the app reads it to draw each participant's condition")
        case .array(let items)?:
            let names = items.compactMap { item -> String? in if case .string(let name) = item { name } else { nil } }
            if names.count != items.count {
                error("/properties/conditions", "must be a list of condition names")
            } else {
                conditions = names
                if names.isEmpty { warn("/properties/conditions", "is empty: only modules with condition \"*\" or none are scheduled") }
                if Set(names).count != names.count { warn("/properties/conditions", "names a condition twice: it is drawn twice as often") }
            }
        default:
            error("/properties/conditions", "must be a list of condition names")
        }
        switch properties["post_url"] {
        case nil: break  // StudyStack names its own receiver when it serves the protocol.
        case .string(let url)? where Self.isWebURL(url): break
        default: error("/properties/post_url", "must be an absolute http or https URL")
        }
        for key in ["study_name", "instructions", "banner_url", "support_email", "support_url", "ethics", "pls", "empty_msg"] {
            switch properties[key] {
            case nil: warn("/properties/\(key)", "is missing: the app shows nothing there")
            case .string?: break
            default: error("/properties/\(key)", "must be a string")
            }
        }
        if let cache = properties["cache"], !cache.isBool { error("/properties/cache", "must be true or false") }
        return conditions
    }

    // MARK: - modules

    mutating func module(_ value: JSONValue, at pointer: String, conditions: [String]?, uuids: [String?]) -> JSONValue {
        guard case .object(var module) = value else {
            error(pointer, "a module is an object")
            return value
        }
        switch module["type"] {
        case .string(let type)? where Self.moduleTypes.contains(type): break
        default: warn("\(pointer)/type", "is not survey, info, video or audio: the app shows a default icon")
        }
        if module["name"]?.nonEmptyString == nil {
            error("\(pointer)/name", "must be a non-empty string (graphs find their module by name)")
        }
        if module["submit_text"] == nil, let alias = module["submit_txt"] {
            // The README says submit_txt; the app reads submit_text.
            module["submit_text"] = alias
            module["submit_txt"] = nil
            warn("\(pointer)/submit_txt", "is read by the app as submit_text; kept under that name")
        }
        if module["submit_text"]?.string == nil { warn("\(pointer)/submit_text", "is missing: the last page's button has no label") }
        switch module["condition"] {
        case .string(let condition)?:
            if condition != "*", let conditions, !conditions.contains(condition) {
                warn("\(pointer)/condition", "\"\(condition)\" is not one of the study's conditions: the module is never scheduled")
            }
        case nil:
            if let conditions, !conditions.isEmpty {
                warn("\(pointer)/condition", "is missing: with conditions drawn, the module is never scheduled (use \"*\" for everyone)")
            }
        default:
            error("\(pointer)/condition", "must be a condition's name or \"*\"")
        }
        if case .object(let alerts)? = module["alerts"] {
            self.alerts(alerts, at: "\(pointer)/alerts")
        } else {
            error("\(pointer)/alerts", "is required: the module's schedule and notification")
        }
        var questionIds: [String] = []
        if case .array(var sections)? = module["sections"], !sections.isEmpty {
            for (index, section) in sections.enumerated() {
                sections[index] = self.section(section, at: "\(pointer)/sections/\(index)", ids: &questionIds)
            }
            module["sections"] = .array(sections)
            branching(sections, at: pointer)
        } else {
            error("\(pointer)/sections", "must be a non-empty list of sections")
        }
        if case .object(let graph)? = module["graph"] {
            self.graph(graph, at: "\(pointer)/graph", questionIds: questionIds)
        } else {
            error("\(pointer)/graph", "is required: {\"display\": false} when the module has no graph")
        }
        switch module["uuid"] {
        case nil: warn("\(pointer)/uuid", "is missing: the app uses -1, and no module can unlock after this one")
        case .string(let uuid)? where !uuid.isEmpty: break
        default: error("\(pointer)/uuid", "must be a non-empty string")
        }
        if let unlock = module["unlock_after"] {
            if case .array(let items) = unlock {
                for (index, item) in items.enumerated() {
                    guard let uuid = item.string else {
                        error("\(pointer)/unlock_after/\(index)", "must be a module's uuid")
                        continue
                    }
                    if !uuids.contains(uuid) {
                        warn("\(pointer)/unlock_after/\(index)", "no module has uuid \"\(uuid)\": this module never unlocks")
                    }
                }
            } else {
                error("\(pointer)/unlock_after", "must be a list of module uuids")
            }
        }
        if let shuffle = module["shuffle"], !shuffle.isBool { error("\(pointer)/shuffle", "must be true or false") }
        return .object(module)
    }

    mutating func alerts(_ alerts: JSONObject, at pointer: String) {
        let days = DocumentBounds.anchorDays
        if let offset = alerts["start_offset"]?.integer {
            if !days.contains(offset) { error("\(pointer)/start_offset", "must be \(days.lowerBound) to \(days.upperBound) days from enrolment") }
        } else {
            error("\(pointer)/start_offset", "must be a whole number of days from enrolment (negative: before it)")
        }
        if let duration = alerts["duration"]?.integer {
            if !(0...days.upperBound).contains(duration) { error("\(pointer)/duration", "must be 0 to \(days.upperBound) days") }
            if duration == 0 { warn("\(pointer)/duration", "is 0: the module is never scheduled") }
        } else {
            error("\(pointer)/duration", "must be a whole number of days")
        }
        if case .array(let times)? = alerts["times"] {
            if times.isEmpty { warn("\(pointer)/times", "is empty: the module is never scheduled") }
            for (index, time) in times.enumerated() {
                guard let hours = time["hours"]?.integer, (0...23).contains(hours),
                    let minutes = time["minutes"]?.integer, (0...59).contains(minutes)
                else {
                    error("\(pointer)/times/\(index)", "must be {\"hours\": 0 to 23, \"minutes\": 0 to 59}")
                    continue
                }
            }
        } else {
            error("\(pointer)/times", "must be a list of times of day")
        }
        let random = alerts["random"]?.bool ?? false
        if let value = alerts["random"], !value.isBool { error("\(pointer)/random", "must be true or false") }
        switch alerts["random_interval"] {
        case nil where random: error("\(pointer)/random_interval", "is required with random: the minutes either side of each time")
        case nil: break
        case let value?:
            if !(0...Self.longestRandomInterval).contains(value.integer ?? -1) {
                error("\(pointer)/random_interval", "must be a whole number of minutes, 0 to \(Self.longestRandomInterval)")
            }
        }
        for key in ["sticky", "timeout"] where alerts[key].map({ !$0.isBool }) == true {
            error("\(pointer)/\(key)", "must be true or false")
        }
        for key in ["sticky_label", "title", "message"] where alerts[key].map({ $0.string == nil }) == true {
            error("\(pointer)/\(key)", "must be a string")
        }
        if alerts["timeout"]?.bool == true {
            switch alerts["timeout_after"] {
            case .number(let after)? where after.double > Double(DocumentBounds.expiresAfterMilliseconds.upperBound):
                error("\(pointer)/timeout_after", "must be at most a year (\(DocumentBounds.expiresAfterMilliseconds.upperBound) ms)")
            case .number(let after)? where after.double >= 0 && after.isWhole:
                if after.double < Self.shortestUsefulTimeout {
                    warn(
                        "\(pointer)/timeout_after",
                        "is \(Int(after.double)) ms: the app reads it in milliseconds, so each task expires \(Int(after.double)) ms after it opens (60000 is one minute)")
                }
            default:
                error("\(pointer)/timeout_after", "must be a whole number of milliseconds with timeout")
            }
        }
    }

    mutating func graph(_ graph: JSONObject, at pointer: String, questionIds: [String]) {
        guard let display = graph["display"]?.bool else {
            error("\(pointer)/display", "must be true or false")
            return
        }
        guard display else { return }
        if let variable = graph["variable"]?.string {
            if !questionIds.contains(variable) { error("\(pointer)/variable", "\"\(variable)\" is not a question of this module") }
        } else {
            error("\(pointer)/variable", "must name the question whose answers the graph shows")
        }
        if !["bar", "line"].contains(graph["type"]?.string ?? "") { error("\(pointer)/type", "must be bar or line") }
        if (graph["max_points"]?.integer ?? 0) < 1 { error("\(pointer)/max_points", "must be a whole number above 0") }
        for key in ["title", "blurb"] where graph[key]?.string == nil { warn("\(pointer)/\(key)", "is missing: the graph has no \(key)") }
    }

    // MARK: - across modules

    mutating func duplicateModuleIds(_ uuids: [String?]) {
        var seen: [String: Int] = [:]
        for (index, uuid) in uuids.enumerated() {
            guard let uuid else { continue }
            if let first = seen[uuid] {
                error("/modules/\(index)/uuid", "\"\(uuid)\" is also module \(first)'s: unlocking cannot tell them apart")
            } else {
                seen[uuid] = index
            }
        }
    }

    mutating func duplicateQuestionIdsAcrossModules(_ modules: [JSONValue]) {
        var owner: [String: Int] = [:]
        for (index, module) in modules.enumerated() {
            let ids = Set(Self.questions(of: module).compactMap { $0.question["id"]?.string })
            for id in ids.sorted() {
                if let first = owner[id] {
                    warn("/modules/\(index)", "question id \"\(id)\" is also in module \(first); the study's data keeps them apart by module")
                } else {
                    owner[id] = index
                }
            }
        }
    }

    // MARK: - helpers

    mutating func error(_ pointer: String, _ message: String) { errors.append(.init(pointer: pointer, message: message)) }
    mutating func warn(_ pointer: String, _ message: String) { warnings.append(.init(pointer: pointer, message: message)) }

    static func isWebURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), url.host?.isEmpty == false else { return false }
        return scheme == "http" || scheme == "https"
    }

    /// Every question of a module with its pointer below the module.
    static func questions(of module: JSONValue) -> [(pointer: String, question: JSONValue)] {
        guard case .array(let sections)? = module["sections"] else { return [] }
        var found: [(String, JSONValue)] = []
        for (sectionIndex, section) in sections.enumerated() {
            guard case .array(let questions)? = section["questions"] else { continue }
            for (index, question) in questions.enumerated() {
                found.append(("/sections/\(sectionIndex)/questions/\(index)", question))
            }
        }
        return found
    }
}
