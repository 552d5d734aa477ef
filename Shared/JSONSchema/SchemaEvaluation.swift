import JSONText

/// Where evaluation reports what fails. One evaluator serves both uses through this: a yes/no
/// check that stops at the first failure and records nothing (for `anyOf` branches, `not`, `if`,
/// and `isValid`), and a full report that keeps every failure with its two locations. The
/// evaluator is generic over it, so the yes/no path keeps no paths and builds no messages.
protocol FailureSink {
    /// Whether evaluation goes on after a failure to find the others.
    var wantsEveryFailure: Bool { get }
    mutating func enter(instance token: @autoclosure () -> String)
    mutating func leaveInstance()
    mutating func enter(keyword token: String)
    mutating func leaveKeyword()
    mutating func fail(_ message: @autoclosure () -> String)
}

/// The yes/no sink.
struct FirstFailure: FailureSink {
    var wantsEveryFailure: Bool { false }
    func enter(instance token: @autoclosure () -> String) {}
    func leaveInstance() {}
    func enter(keyword token: String) {}
    func leaveKeyword() {}
    func fail(_ message: @autoclosure () -> String) {}
}

/// The full report.
struct FailureReport: FailureSink {
    var wantsEveryFailure: Bool { failures.count < limit }
    let limit: Int
    private(set) var failures: [SchemaViolation] = []
    private var instancePath: [String] = []
    private var keywordPath: [String] = []

    init(limit: Int) { self.limit = limit }

    mutating func enter(instance token: @autoclosure () -> String) { instancePath.append(token()) }
    mutating func leaveInstance() { instancePath.removeLast() }
    mutating func enter(keyword token: String) { keywordPath.append(token) }
    mutating func leaveKeyword() { keywordPath.removeLast() }
    mutating func fail(_ message: @autoclosure () -> String) {
        guard failures.count < limit else { return }
        failures.append(SchemaViolation(instanceLocation: JSONPointer(tokens: instancePath), keywordLocation: JSONPointer(tokens: keywordPath), message: message()))
    }
}

/// Evaluation went deeper than `SchemaEvaluator.maxDepth`: the schema's references go round
/// without end (or nearly). It ends the whole evaluation, so that `not` or `anyOf` cannot turn
/// an undecided branch into a verdict.
struct TooDeep: Error {}

/// Checks instances against compiled nodes.
struct SchemaEvaluator {
    let nodes: [CompiledNode]
    /// How many schemas deep one check may go. The parser bounds a document's depth (256), so a
    /// real document and schema stay far below this; references that go round without reaching
    /// further into the instance end here instead of in a stack overflow.
    static let maxDepth = 1000
    static let tooDeepMessage = "the schema refers to itself too deeply here to decide"

    /// The whole check, at the top: a `TooDeep` becomes a failure.
    func run<Sink: FailureSink>(_ value: JSONValue, node: Int, into sink: inout Sink) -> Bool {
        do {
            return try evaluate(value, node: node, depth: 0, into: &sink)
        } catch {
            sink.fail(Self.tooDeepMessage)
            return false
        }
    }

    func isValid(_ value: JSONValue, node: Int, depth: Int) throws(TooDeep) -> Bool {
        var probe = FirstFailure()
        return try evaluate(value, node: node, depth: depth, into: &probe)
    }

    func evaluate<Sink: FailureSink>(_ value: JSONValue, node: Int, depth: Int, into sink: inout Sink) throws(TooDeep) -> Bool {
        guard depth < Self.maxDepth else { throw TooDeep() }
        var valid = true
        for keyword in nodes[node].keywords {
            if try !check(keyword, value, depth: depth + 1, into: &sink) {
                valid = false
                if !sink.wantsEveryFailure { return false }
            }
        }
        return valid
    }

    /// Evaluates a subschema under a keyword's token(s), with the instance one level down when
    /// `instanceToken` is given.
    private func descend<Sink: FailureSink>(_ value: JSONValue, node: Int, keyword: [String], instanceToken: String?, depth: Int,
                                            into sink: inout Sink) throws(TooDeep) -> Bool {
        for token in keyword { sink.enter(keyword: token) }
        if let instanceToken { sink.enter(instance: instanceToken) }
        defer {
            if instanceToken != nil { sink.leaveInstance() }
            for _ in keyword { sink.leaveKeyword() }
        }
        return try evaluate(value, node: node, depth: depth, into: &sink)
    }

    private func failing<Sink: FailureSink>(_ keyword: String, _ message: @autoclosure () -> String, into sink: inout Sink) -> Bool {
        sink.enter(keyword: keyword)
        sink.fail(message())
        sink.leaveKeyword()
        return false
    }

    /// One keyword against a value. The recursion goes through here and `descend` a level of the
    /// schema at a time, so this stays a small dispatch and each group of keywords is its own
    /// function: one function of every case would hold every case's locals in each frame (a
    /// debug build's frame then grows past 7 KiB), and `SchemaEvaluator.maxDepth` levels of it
    /// would come near a thread's stack.
    private func check<Sink: FailureSink>(_ keyword: Keyword, _ value: JSONValue, depth: Int, into sink: inout Sink) throws(TooDeep) -> Bool {
        switch keyword {
        case .reference(let target):
            try descend(value, node: target, keyword: ["$ref"], instanceToken: nil, depth: depth, into: &sink)
        case .items, .tupleItems, .contains:
            try checkItems(keyword, value, depth: depth, into: &sink)
        case .members(let members):
            if case .object(let object) = value { try checkMembers(members, object, depth: depth, into: &sink) } else { true }
        case .dependencies, .propertyNames:
            try checkObjectSchemas(keyword, value, depth: depth, into: &sink)
        case .allOf, .anyOf, .oneOf, .not, .conditional:
            try checkCombination(keyword, value, depth: depth, into: &sink)
        default:
            checkLeaf(keyword, value, into: &sink)
        }
    }

    /// The keywords that look at the value alone.
    // swiftlint:disable:next cyclomatic_complexity
    private func checkLeaf<Sink: FailureSink>(_ keyword: Keyword, _ value: JSONValue, into sink: inout Sink) -> Bool {
        switch (keyword, value) {
        case (.never, _):
            sink.fail("nothing is allowed here")
            return false
        case (.type(let types), _):
            return types.admits(value) || failing("type", "must be \(types.description), not \(Self.typeName(value))", into: &sink)
        case (.enumeration(let options), _):
            return options.contains { ExactJSON.same($0, value) } || failing("enum", "must be one of the values listed", into: &sink)
        case (.constant(let expected), _):
            return ExactJSON.same(expected, value) || failing("const", "must be \(Self.shortText(expected))", into: &sink)

        case (.multipleOf(let divisor), .number(let number)):
            return number.isMultiple(of: divisor)
                || failing("multipleOf", "must be a multiple of \(divisor.description)", into: &sink)
        case (.maximum(let limit), .number(let number)):
            return number <= limit || failing("maximum", "must be at most \(limit.description)", into: &sink)
        case (.exclusiveMaximum(let limit), .number(let number)):
            return number < limit || failing("exclusiveMaximum", "must be less than \(limit.description)", into: &sink)
        case (.minimum(let limit), .number(let number)):
            return number >= limit || failing("minimum", "must be at least \(limit.description)", into: &sink)
        case (.exclusiveMinimum(let limit), .number(let number)):
            return number > limit || failing("exclusiveMinimum", "must be more than \(limit.description)", into: &sink)

        case (.maxLength(let limit), .string(let text)):
            // Lengths count Unicode scalars, as JSON Schema counts code points.
            return Self.scalarCount(text, atMost: limit) || failing("maxLength", "must be at most \(limit) characters long", into: &sink)
        case (.minLength(let limit), .string(let text)):
            return !Self.scalarCount(text, atMost: limit - 1) || failing("minLength", "must be at least \(limit) characters long", into: &sink)
        case (.pattern(let pattern), .string(let text)):
            return pattern.matches(text) || failing("pattern", "must match the pattern \(pattern.source)", into: &sink)
        case (.format(let format), .string(let text)):
            return format.admits(text) || failing("format", "must be \(format.description)", into: &sink)

        case (.maxItems(let limit), .array(let items)):
            return items.count <= limit || failing("maxItems", "must hold at most \(limit) items", into: &sink)
        case (.minItems(let limit), .array(let items)):
            return items.count >= limit || failing("minItems", "must hold at least \(limit) items", into: &sink)
        case (.uniqueItems, .array(let items)):
            var seen: [ExactJSON: Int] = [:]
            seen.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                if let first = seen.updateValue(index, forKey: ExactJSON(value: item)) {
                    return failing("uniqueItems", "items \(first) and \(index) are equal; every item must differ", into: &sink)
                }
            }
            return true

        case (.required(let names), .object(let object)):
            var valid = true
            for name in names where object[name] == nil {
                valid = false
                _ = failing("required", "the member \"\(name)\" is required", into: &sink)
                if !sink.wantsEveryFailure { return false }
            }
            return valid
        case (.maxProperties(let limit), .object(let object)):
            return object.count <= limit || failing("maxProperties", "must have at most \(limit) members", into: &sink)
        case (.minProperties(let limit), .object(let object)):
            return object.count >= limit || failing("minProperties", "must have at least \(limit) members", into: &sink)

        default:
            // A keyword for another type of value says nothing about this one.
            return true
        }
    }

    /// The keywords that check an array's items against schemas.
    private func checkItems<Sink: FailureSink>(_ keyword: Keyword, _ value: JSONValue, depth: Int, into sink: inout Sink) throws(TooDeep) -> Bool {
        switch (keyword, value) {
        case (.items(let node), .array(let items)):
            var valid = true
            for (index, item) in items.enumerated() {
                guard try !descend(item, node: node, keyword: ["items"], instanceToken: String(index), depth: depth, into: &sink) else { continue }
                valid = false
                if !sink.wantsEveryFailure { return false }
            }
            return valid
        case (.tupleItems(let positions, let additional), .array(let items)):
            var valid = true
            for (index, item) in items.enumerated() {
                let passed: Bool
                if index < positions.count {
                    passed = try descend(item, node: positions[index], keyword: ["items", String(index)], instanceToken: String(index), depth: depth, into: &sink)
                } else if let additional {
                    passed = try descend(item, node: additional, keyword: ["additionalItems"], instanceToken: String(index), depth: depth, into: &sink)
                } else {
                    break
                }
                if !passed {
                    valid = false
                    if !sink.wantsEveryFailure { return false }
                }
            }
            return valid
        case (.contains(let node), .array(let items)):
            for item in items where try isValid(item, node: node, depth: depth) { return true }
            return failing("contains", "must hold at least one item that matches the schema under contains", into: &sink)
        default:
            // A keyword for another type of value says nothing about this one.
            return true
        }
    }

    /// The keywords that check an object's names or the whole object against schemas.
    private func checkObjectSchemas<Sink: FailureSink>(_ keyword: Keyword, _ value: JSONValue, depth: Int, into sink: inout Sink) throws(TooDeep) -> Bool {
        switch (keyword, value) {
        case (.dependencies(let dependencies), .object(let object)):
            var valid = true
            for (name, dependency) in dependencies where object[name] != nil {
                switch dependency {
                case .members(let names):
                    for needed in names where object[needed] == nil {
                        valid = false
                        sink.enter(keyword: "dependencies")
                        _ = failing(name, "the member \"\(needed)\" is required when \"\(name)\" is present", into: &sink)
                        sink.leaveKeyword()
                        if !sink.wantsEveryFailure { return false }
                    }
                case .schema(let node):
                    if try !descend(value, node: node, keyword: ["dependencies", name], instanceToken: nil, depth: depth, into: &sink) {
                        valid = false
                        if !sink.wantsEveryFailure { return false }
                    }
                }
            }
            return valid
        case (.propertyNames(let node), .object(let object)):
            var valid = true
            for name in object.keys.sorted() {
                guard try !descend(.string(name), node: node, keyword: ["propertyNames"], instanceToken: name, depth: depth, into: &sink) else { continue }
                valid = false
                if !sink.wantsEveryFailure { return false }
            }
            return valid
        default:
            // A keyword for another type of value says nothing about this one.
            return true
        }
    }

    /// The keywords that combine schemas over the same value.
    private func checkCombination<Sink: FailureSink>(_ keyword: Keyword, _ value: JSONValue, depth: Int, into sink: inout Sink) throws(TooDeep) -> Bool {
        switch (keyword, value) {
        case (.allOf(let nodes), _):
            var valid = true
            for (index, node) in nodes.enumerated() {
                guard try !descend(value, node: node, keyword: ["allOf", String(index)], instanceToken: nil, depth: depth, into: &sink) else { continue }
                valid = false
                if !sink.wantsEveryFailure { return false }
            }
            return valid
        case (.anyOf(let nodes), _):
            for node in nodes where try isValid(value, node: node, depth: depth) { return true }
            return failing("anyOf", "must match at least one of the \(nodes.count) schemas under anyOf", into: &sink)
        case (.oneOf(let nodes), _):
            var matched: [Int] = []
            for (index, node) in nodes.enumerated() {
                guard try isValid(value, node: node, depth: depth) else { continue }
                matched.append(index)
                if matched.count > 1 { break }
            }
            if matched.count == 1 { return true }
            return failing("oneOf", matched.isEmpty ? "must match one of the \(nodes.count) schemas under oneOf, and matches none"
                : "must match only one of the schemas under oneOf, and matches \(matched[0]) and \(matched[1])", into: &sink)
        case (.not(let node), _):
            return try !isValid(value, node: node, depth: depth) || failing("not", "must not match the schema under not", into: &sink)
        case (.conditional(let condition, let then, let otherwise), _):
            if try isValid(value, node: condition, depth: depth) {
                guard let then else { return true }
                return try descend(value, node: then, keyword: ["then"], instanceToken: nil, depth: depth, into: &sink)
            }
            guard let otherwise else { return true }
            return try descend(value, node: otherwise, keyword: ["else"], instanceToken: nil, depth: depth, into: &sink)

        default:
            // A keyword for another type of value says nothing about this one.
            return true
        }
    }

    private func checkMembers<Sink: FailureSink>(_ members: ObjectMembers, _ object: JSONObject, depth: Int, into sink: inout Sink) throws(TooDeep) -> Bool {
        var valid = true
        // Members in name order, so that a report lists problems in the same order every time.
        let ordered: [JSONObject.Element] = sink.wantsEveryFailure ? object.sorted { $0.key < $1.key } : Array(object)
        for (name, member) in ordered {
            var matched = false
            if let node = members.properties[ScalarKey(name)] {
                matched = true
                if try !descend(member, node: node, keyword: ["properties", name], instanceToken: name, depth: depth, into: &sink) {
                    valid = false
                    if !sink.wantsEveryFailure { return false }
                }
            }
            for (pattern, node) in members.patterns where pattern.matches(name) {
                matched = true
                if try !descend(member, node: node, keyword: ["patternProperties", pattern.source], instanceToken: name, depth: depth, into: &sink) {
                    valid = false
                    if !sink.wantsEveryFailure { return false }
                }
            }
            if !matched, let additional = members.additional,
                try !descend(member, node: additional, keyword: ["additionalProperties"], instanceToken: name, depth: depth, into: &sink) {
                valid = false
                if !sink.wantsEveryFailure { return false }
            }
        }
        return valid
    }

    /// Whether `text` has at most `limit` Unicode scalars, stopping early on a long text.
    private static func scalarCount(_ text: String, atMost limit: Int) -> Bool {
        guard limit >= 0 else { return false }
        if text.utf8.count <= limit { return true }
        var count = 0
        for _ in text.unicodeScalars {
            count += 1
            if count > limit { return false }
        }
        return true
    }

    static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number(let number): number.isWhole ? "an integer" : "a number"
        }
    }

    /// A value as JSON, cut short when long, for a message.
    static func shortText(_ value: JSONValue) -> String {
        let text = value.serialized()
        return text.unicodeScalars.count <= 80 ? text : String(String.UnicodeScalarView(text.unicodeScalars.prefix(77))) + "..."
    }
}

/// One way an instance fails its schema: where in the instance, which keyword (the path through
/// the schema as evaluated, `$ref` steps included), and a sentence.
public struct SchemaViolation: Equatable, Sendable, CustomStringConvertible {
    public var instanceLocation: JSONPointer
    public var keywordLocation: JSONPointer
    public var message: String

    public var description: String {
        "\(instanceLocation.tokens.isEmpty ? "the document" : instanceLocation.description) \(message) (\(keywordLocation.description))"
    }
}
