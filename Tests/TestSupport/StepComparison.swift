import StudyModels

/// Compares an activity's steps as written (for example a LabKey design) with the steps served
/// back: same count, and per step the same type, key, resultType and format (an absent format and
/// `{}` are the same to the apps), forms recursively. Returns each difference, located.
public enum StepComparison {
    public static func differences(_ original: [JSONValue], _ served: [JSONValue], path: String) -> [String] {
        var found: [String] = []
        if original.count != served.count {
            found.append("\(path): \(original.count) steps written, \(served.count) served")
        }
        for (index, (before, after)) in zip(original, served).enumerated() {
            guard case .object(let before) = before, case .object(let after) = after else {
                found.append("\(path)/\(index) is not an object")
                continue
            }
            for field in ["type", "key", "resultType"] where before[field] != after[field] {
                found.append("\(path)/\(index)/\(field): \(String(describing: before[field])) became \(String(describing: after[field]))")
            }
            if (before["format"] ?? .object([:])) != withoutServedDefaults(after["format"] ?? .object([:]), written: before["format"]) {
                found.append("\(path)/\(index)/format differs")
            }
            if case .array(let children)? = before["steps"], case .array(let servedChildren)? = after["steps"] {
                found += differences(children, servedChildren, path: "\(path)/\(index)/steps")
            }
        }
        return found
    }

    /// What the original servers always sent in a date question's format, empty when unset (the
    /// iOS app unwraps each): taken out again where the written design left it out.
    static let servedDateDefaults: [String: JSONValue] = [
        "minDate": .string(""), "maxDate": .string(""), "default": .string(""), "dateRange": .string("custom"),
    ]

    static func withoutServedDefaults(_ served: JSONValue, written: JSONValue?) -> JSONValue {
        guard case .object(var members) = served else { return served }
        let writtenMembers: JSONObject
        if case .object(let object)? = written { writtenMembers = object } else { writtenMembers = JSONObject() }
        for (name, value) in servedDateDefaults where writtenMembers[name] == nil && members[name] == value {
            members[name] = nil
        }
        return .object(members)
    }
}
