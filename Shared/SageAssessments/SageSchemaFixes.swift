import JSONText

/// What Sage's generated schema files get wrong, mended in memory when they are loaded (the files
/// ship as published). The main mistake is that nothing dispatches on `type`: a step is checked
/// against `Node.json`'s root, which asks only for a `type` and an `identifier`, never against the
/// definition of its kind. Validating with the files as they are is nearly useless: a step is checked
/// only for a `type` and an `identifier`, and every official `TextInputItem` example fails.
enum SageSchemaFixes {
    /// Files whose root stands for a family of types told apart by their `type` member; each
    /// definition with a constant `type` is one member of the family.
    static let polymorphicFiles = [
        "Node.json", "TextInputItem.json", "ImageInfo.json", "ButtonActionInfo.json", "AsyncActionConfiguration.json",
        "ResultData.json", "AnswerType.json",
    ]

    /// The mended documents, by file name.
    static func apply(to files: inout JSONObject) {
        // The generator wrote the wrong constants for two input items.
        set(&files, "TextInputItem.json", ["definitions", "DurationTextInputItemObject", "properties", "type", "const"], .string("duration"))
        set(&files, "TextInputItem.json", ["definitions", "TimeTextInputItemObject", "properties", "type", "const"], .string("time"))
        // Only `type` is required of an input item: the models declare the rest optional.
        set(&files, "TextInputItem.json", ["required"], .array([.string("type")]))
        // Sage's runners default a missing `baseType` to "string"; the check warns instead.
        set(&files, "Node.json", ["definitions", "ChoiceQuestionStepObject", "required"], .array([.string("type"), .string("choices")]))
        // Sage's own surveys use resource image names outside the list; the check warns instead.
        set(&files, "ImageInfo.json", ["definitions", "Name", "enum"], nil)
        // What the official clients write in an archive (BridgeClientKMM's archive builders, iOS
        // and Android; docs/sage.md, What Sage's clients send): `answers.json` names its schema
        // as the relative `answers_schema.json`, which `format: uri` refuses, so no archive of
        // theirs was accepted; a file result may name its schema the same way. A file's name is
        // the ZIP reader's to judge (`..`, absolute paths, control characters), not
        // `uri-reference`'s, which refuses the space a step's identifier may hold.
        set(&files, "ArchiveMetadata.json", ["definitions", "FileInfo", "properties", "jsonSchema", "format"], .string("uri-reference"))
        set(&files, "ArchiveMetadata.json", ["definitions", "FileInfo", "properties", "filename", "format"], nil)
        set(&files, "ResultData.json", ["definitions", "FileResultObject", "properties", "jsonSchema", "format"], .string("uri-reference"))
        set(&files, "ResultData.json", ["definitions", "FileResultObject", "properties", "relativePath", "format"], nil)
        pointUsesAtDispatch(&files)
        for name in polymorphicFiles { dispatchOnType(&files, name) }
    }

    /// The definition added to each family's file: the root's own rules, then, for each member,
    /// an `if`/`then` that checks a value whose `type` is the member's constant against the
    /// member's definition.
    static let dispatchDefinition = "StudyStackTypeDispatch"

    private static func dispatchOnType(_ files: inout JSONObject, _ name: String) {
        guard case .object(var root)? = files[name], case .object(var definitions)? = root["definitions"] else { return }
        var branches: [JSONValue] = [.object(["$ref": .string("#")])]
        for (definition, schema) in definitions.sorted(by: { $0.key < $1.key }) {
            guard case .string(let type)? = schema["properties"]?["type"]?["const"] else { continue }
            branches.append(.object([
                "if": .object(["properties": .object(["type": .object(["const": .string(type)])]), "required": .array([.string("type")])]),
                "then": .object(["$ref": .string("#/definitions/" + JSONPointer.escape(definition))]),
            ]))
        }
        definitions[dispatchDefinition] = .object(["allOf": .array(branches)])
        root["definitions"] = .object(definitions)
        files[name] = .object(root)
    }

    /// Points every use of a family's root at its dispatch instead: an item of `steps`, an
    /// `inputItem`, an `image`, … A reference that is an item of `allOf` is a definition taking
    /// in the root's rules (`"allOf": [{"$ref": "#"}]`), not a use, and stays.
    private static func pointUsesAtDispatch(_ files: inout JSONObject) {
        for name in files.keys.sorted() {
            guard let document = files[name] else { continue }
            files[name] = rewritten(document, in: name, isAllOfItem: false)
        }
    }

    private static func rewritten(_ value: JSONValue, in file: String, isAllOfItem: Bool) -> JSONValue {
        switch value {
        case .array(let items):
            return .array(items.map { rewritten($0, in: file, isAllOfItem: false) })
        case .object(var members):
            if !isAllOfItem, case .string(let reference)? = members["$ref"], let family = familyRoot(named: reference, from: file) {
                members["$ref"] = .string("\(family)#/definitions/\(dispatchDefinition)")
            }
            for (key, member) in members where key != "$ref" && key != "enum" && key != "const" && key != "examples" {
                if key == "allOf", case .array(let items) = member {
                    members[key] = .array(items.map { rewritten($0, in: file, isAllOfItem: true) })
                } else {
                    members[key] = rewritten(member, in: file, isAllOfItem: false)
                }
            }
            return .object(members)
        default:
            return value
        }
    }

    /// The family file a reference names the root of (`#` inside a family's file, or the file's
    /// name or published address with no fragment), or nil.
    private static func familyRoot(named reference: String, from file: String) -> String? {
        if reference == "#" || reference.isEmpty { return polymorphicFiles.contains(file) ? file : nil }
        guard !reference.unicodeScalars.contains("#") || reference.hasSuffix("#") else { return nil }
        let path = reference.hasSuffix("#") ? String(reference.dropLast()) : reference
        let last = path.split(separator: "/").last.map(String.init) ?? path
        return polymorphicFiles.contains(last) ? last : nil
    }

    private static func set(_ files: inout JSONObject, _ name: String, _ tokens: [String], _ value: JSONValue?) {
        guard var document = files[name] else { return }
        try? document.set(value, at: JSONPointer(tokens: tokens))
        files[name] = document
    }

    /// The member type names of one family, as dispatched (for messages naming what is allowed).
    static func memberTypes(of name: String, in files: JSONObject) -> [String] {
        guard case .object(let definitions)? = files[name]?["definitions"] else { return [] }
        return definitions.values.compactMap { $0["properties"]?["type"]?["const"]?.text }.sorted()
    }
}
