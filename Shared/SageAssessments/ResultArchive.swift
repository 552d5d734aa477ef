import JSONSchema
import JSONText
import StudyModels
import ZipArchive

/// A Sage result archive, read as docs/sage.md (Result archives) describes: its `metadata.json`
/// (the manifest), the files the manifest names, `assessmentResult.json` checked with the mended
/// schemas, and the answers in it, each at its step's path.
public struct ResultArchive: Sendable {
    /// What a phone's archive may hold (what Sage's clients write is far below each).
    public static let limits = ZipArchive.Limits(maxFiles: 200, maxTotalBytes: 100 << 20, maxFileBytes: 50 << 20, maxRatio: 200)
    /// Files an archive may hold beside those its manifest names.
    public static let unlistedFiles: Set<String> = ["metadata.json", "info.json", "answers_schema.json"]

    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// Where the problem is: a file of the archive, and a JSON pointer into it ("" for the
        /// archive as a whole).
        public var file: String
        public var problems: [ValidationProblem]

        public var description: String {
            problems.map { "\(file.isEmpty ? "the archive" : file)\($0.pointer.isEmpty ? "" : " \($0.pointer)"): \($0.message)" }
                .joined(separator: "; ")
        }
    }

    /// One answer: its step's path (`section/question`), the value as the phone wrote it, and the
    /// answer type's `type` when the result gives one.
    public struct Answer: Sendable, Equatable {
        public var path: String
        public var value: JSONValue
        public var answerType: String?

        public init(path: String, value: JSONValue, answerType: String?) {
            self.path = path
            self.value = value
            self.answerType = answerType
        }
    }

    public let metadata: JSONValue
    public let assessmentResult: JSONValue?
    /// The run's identifier (`taskRunUUID`), which makes a replayed upload recognisable.
    public let taskRunUUID: String?
    /// The assessment the result answers (`assessmentIdentifier`, else `identifier`; without
    /// `assessmentResult.json`, info.json's `item`, else answers_schema.json's `description`).
    public let assessmentIdentifier: String?
    /// The last answer at each path, in the order the steps were first answered; without
    /// `assessmentResult.json`, answers.json's members by name (their path with `_` for `/`).
    public let answers: [Answer]
    public let files: [ZipArchive.File]
    /// Files the manifest does not name, beside the three an archive may carry unlisted.
    public let unlisted: [String]

    public init(_ zip: ZipArchive, schemas: SageSchemaSet) throws(Refusal) {
        guard let metadataBytes = zip["metadata.json"] else {
            throw Refusal(file: "", problems: [ValidationProblem(pointer: "", message: "it holds no metadata.json")])
        }
        let metadata = try Self.json(metadataBytes, file: "metadata.json", budget: .sageManifest)
        try Self.check(metadata, against: schemas.archiveMetadata, file: "metadata.json")
        let listed = (metadata["files"]?.array ?? []).compactMap { $0["filename"]?.string }
        // Names by scalars throughout: two names Swift's `String` takes for one are two files.
        let present = Set(zip.files.map { ScalarKey($0.name) })
        let missing = listed.enumerated().filter { !present.contains(ScalarKey($0.element)) }
        guard missing.isEmpty else {
            throw Refusal(file: "metadata.json", problems: missing.map {
                ValidationProblem(pointer: "/files/\($0.offset)/filename", message: "names \($0.element), which the archive does not hold")
            })
        }
        let listedSet = Set(listed.map { ScalarKey($0) })
        unlisted = zip.files.map(\.name).filter { name in
            !listedSet.contains(ScalarKey(name)) && !Self.unlistedFiles.contains { $0.utf8.elementsEqual(name.utf8) }
        }

        var result: JSONValue?
        if let resultBytes = zip["assessmentResult.json"] {
            let value = try Self.json(resultBytes, file: "assessmentResult.json", budget: .sageResult)
            try Self.check(value, against: schemas.assessmentResult, file: "assessmentResult.json")
            result = value
        }
        self.metadata = metadata
        assessmentResult = result
        taskRunUUID = result?["taskRunUUID"]?.string
        var answers: [Answer] = []
        if let result {
            var index: [ScalarKey: Int] = [:]
            Self.collect(result["stepHistory"]?.array ?? [], prefix: "", into: &answers, index: &index)
            assessmentIdentifier = result["assessmentIdentifier"]?.nonEmptyString ?? result["identifier"]?.string
        } else {
            // Older clients write only the flat answers.json, and name the assessment in info.json
            // (`item`) or answers_schema.json (`description`).
            let info = try zip["info.json"].map { bytes throws(Refusal) in try Self.json(bytes, file: "info.json", budget: .sageSideFile) }
            let answersSchema = try zip["answers_schema.json"].map { bytes throws(Refusal) in
                try Self.json(bytes, file: "answers_schema.json", budget: .sageSideFile)
            }
            if let bytes = zip["answers.json"] {
                guard case .object(let flat) = try Self.json(bytes, file: "answers.json", budget: .sageResult) else {
                    throw Refusal(file: "answers.json", problems: [ValidationProblem(pointer: "", message: "must be an object of answers by name")])
                }
                answers = flat.keys.sorted().map { Answer(path: $0, value: flat[$0] ?? .null, answerType: nil) }
            }
            assessmentIdentifier = info?["item"]?.nonEmptyString ?? answersSchema?["description"]?.nonEmptyString
        }
        guard answers.count <= Self.maxAnswers else {
            throw Refusal(file: result == nil ? "answers.json" : "assessmentResult.json", problems: [
                ValidationProblem(pointer: "", message: "it holds \(answers.count) answers; at most \(Self.maxAnswers) are taken")
            ])
        }
        self.answers = answers
        files = zip.files
    }

    /// The most answers one archive may carry: the longest of Sage's surveys has a few dozen, and
    /// each answer becomes a column's value or a row.
    public static let maxAnswers = 1_000

    /// Walks results: an `answer` is kept at its path (a later one at the same path replaces it,
    /// as when a participant goes back); `section` and `collection` results add their identifier
    /// to the path of what they hold. The walk is as deep as the document, which the parser bounds.
    /// Paths are compared by scalars: two steps whose identifiers Swift's `String` takes for one
    /// (canonically equivalent) are two answers.
    private static func collect(_ results: [JSONValue], prefix: String, into answers: inout [Answer], index: inout [ScalarKey: Int]) {
        for result in results {
            guard let identifier = result["identifier"]?.string else { continue }
            let path = prefix + identifier
            switch result["type"]?.string {
            case "answer":
                let answer = Answer(path: path, value: result["value"] ?? .null, answerType: result["answerType"]?["type"]?.string)
                if let at = index[ScalarKey(path)] { answers[at] = answer } else {
                    index[ScalarKey(path)] = answers.count
                    answers.append(answer)
                }
            case "section":
                collect(result["stepHistory"]?.array ?? [], prefix: path + "/", into: &answers, index: &index)
            case "collection":
                collect(result["children"]?.array ?? [], prefix: path + "/", into: &answers, index: &index)
            default:
                continue
            }
        }
    }

    /// `bytes` parsed within what that file of an archive may build: every other file is kept as
    /// bytes and never parsed.
    private static func json(_ bytes: [UInt8], file: String, budget: JSONValue.Budget) throws(Refusal) -> JSONValue {
        do {
            return try JSONValue.parse(bytes, budget: budget)
        } catch {
            throw Refusal(file: file, problems: [ValidationProblem(pointer: "", message: error.description)])
        }
    }

    private static func check(_ value: JSONValue, against schema: JSONSchema, file: String) throws(Refusal) {
        // The yes/no check allocates no report; the report is built only for what fails.
        guard !schema.isValid(value) else { return }
        let violations = schema.violations(of: value, limit: 50)
        guard violations.isEmpty else {
            throw Refusal(file: file, problems: violations.map {
                ValidationProblem(pointer: $0.instanceLocation.description, message: "\($0.message) (schema: \($0.keywordLocation.description))")
            })
        }
    }
}
