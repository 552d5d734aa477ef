import Foundation
import JSONText
import StudyModels

/// One stored response, as the FHIR API shows it.
public struct StoredResponse: Sendable {
    public var id: Int64
    public var studyId: String
    /// The participant's id in the study (the `ParticipantId` of the study's tables).
    public var participantId: Int64
    public var activityId: String
    public var version: String
    public var runId: String?
    /// The app's `data`: `results`, and the run's `startTime` and `endTime`.
    public var data: JSONValue
    public var receivedAt: Date
    /// The design the response answers, when it is known; answers are typed by it.
    public var design: ActivityDesign?
    public var language: String?

    public init(
        id: Int64, studyId: String, participantId: Int64, activityId: String, version: String, runId: String?, data: JSONValue,
        receivedAt: Date, design: ActivityDesign?, language: String? = nil
    ) {
        self.id = id
        self.studyId = studyId
        self.participantId = participantId
        self.activityId = activityId
        self.version = version
        self.runId = runId
        self.data = data
        self.receivedAt = receivedAt
        self.design = design
        self.language = language
    }
}

/// A stored response as a FHIR `QuestionnaireResponse`: its `questionnaire` is the exact version
/// answered (`url|version`), its subject and source the participant's `Patient`, its identifier
/// the run, and every answer typed as the question's item is (docs/fhir.md).
public enum QuestionnaireResponseMapping {
    public struct Result: Sendable {
        public var resource: JSONValue
        /// Results that had no FHIR reading (a value of the wrong shape), by linkId.
        public var notMapped: [NotMapped]
    }

    /// When the participant finished the run, as the app wrote it (its end, or when it was
    /// submitted), with its offset; when it was received, if the app wrote neither.
    public static func authored(_ response: StoredResponse) -> String {
        authored(endTime: response.data["endTime"]?.text, submittedTime: response.data["submittedTime"]?.text, receivedAt: response.receivedAt)
    }

    static func authored(endTime: String?, submittedTime: String?, receivedAt: Date) -> String {
        [endTime, submittedTime].lazy.compactMap { $0.flatMap(FHIRDates.dateTime) }.first(where: { $0.count > 10 })
            ?? FHIRJSON.instant(receivedAt)
    }

    /// One response on its own (a read); pages and exports keep a `Mappers` for their responses.
    public static func questionnaireResponse(_ response: StoredResponse, naming: FHIRNaming) -> Result {
        QuestionnaireResponseMapper(for: response, naming: naming).map(response)
    }

    /// The mappers of the versions and languages a page or an export meets, each prepared once.
    public struct Mappers: Sendable {
        public let naming: FHIRNaming
        /// A page meets a few versions; an export of a study every one, each in a few languages.
        /// Past this many the oldest is dropped, so a study of many versions bounds the memory.
        public static let capacity = 256
        private var prepared: [ScalarKey: QuestionnaireResponseMapper] = [:]
        private var order: [ScalarKey] = []
        /// Kept from one response to the next: reading a response's answers allocates nothing.
        private var tape = JSONTape()

        public init(naming: FHIRNaming) {
            self.naming = naming
        }

        public mutating func map(_ response: StoredResponse) -> Result {
            mapper(for: response).map(response)
        }

        /// `response`'s JSON text appended to `text`; the results that had no FHIR reading.
        @discardableResult
        public mutating func write(_ response: StoredResponse, to text: inout FHIRText) -> [NotMapped] {
            mapper(for: response).write(response, to: &text)
        }

        /// `response`, with its answers read from `answers`, the text they were stored as
        /// (`response.data` is not read), appended to `text`. Answers that do not read as JSON
        /// within their budget (which what was stored did when it was received) are written as
        /// none.
        @discardableResult
        public mutating func write(_ response: StoredResponse, answers: some Collection<UInt8>, to text: inout FHIRText) -> [NotMapped] {
            let mapper = mapper(for: response)
            do {
                return try tape.read(answers, budget: .responseAnswers) { mapper.write(response, answers: $0, to: &text) }
            } catch {
                return mapper.write(response, answers: nil, to: &text)
            }
        }

        private mutating func mapper(for response: StoredResponse) -> QuestionnaireResponseMapper {
            let key = ScalarKey([response.studyId, response.activityId, response.version, response.language ?? ""].joined(separator: "\u{0}"))
            if let mapper = prepared[key] { return mapper }
            let mapper = QuestionnaireResponseMapper(for: response, naming: naming)
            if order.count >= Self.capacity { prepared[order.removeFirst()] = nil }
            prepared[key] = mapper
            order.append(key)
            return mapper
        }
    }
}

/// The design of one activity version, in one language, made ready to map its responses: what
/// every response of it shares (each question's text, item type, choice system and displays, the
/// canonical reference) is worked out once, and its fixed text escaped once, so a response costs
/// only its answers.
///
/// A response is written straight to JSON text (`write`), the one form of the mapping: an export
/// writes hundreds of thousands, and a tree of values for each (built, written, then freed) cost
/// several times the text itself. A read or a page parses the text back into a value.
public struct QuestionnaireResponseMapper: Sendable {
    let naming: FHIRNaming
    let studyId: String
    let activityId: String
    /// `"questionnaire":"url|version"`, escaped.
    let questionnaireMember: [UInt8]
    /// `"identifier":{"system":"…","value":`, escaped.
    let identifierHead: [UInt8]
    let steps: PreparedSteps

    public init(for response: StoredResponse, naming: FHIRNaming) {
        self.naming = naming
        studyId = response.studyId
        activityId = response.activityId
        var text = FHIRText()
        text.raw(#""questionnaire":"#)
        text.string("\(naming.questionnaireURL(studyId: response.studyId, activityId: response.activityId))|\(response.version)")
        questionnaireMember = text.bytes
        text = FHIRText()
        text.raw(#""identifier":{"system":"#)
        text.string(naming.runSystem(studyId: response.studyId))
        text.raw(#","value":"#)
        identifierHead = text.bytes
        steps = PreparedSteps(
            response.design?.steps ?? [], language: response.language,
            choiceSystem: { naming.choiceSystem(studyId: response.studyId, activityId: response.activityId, key: $0) })
    }

    /// `response`, which must answer this mapper's version in its language, as a value.
    public func map(_ response: StoredResponse) -> QuestionnaireResponseMapping.Result {
        var text = FHIRText()
        let notMapped = write(response, to: &text)
        // The text is written by the code above from values already parsed within their
        // budget, so it parses; were it ever not to, the response is said to be in error
        // rather than shown wrong.
        guard let resource = try? JSONValue.parse(text.bytes, budget: Self.readBack(text.bytes.count)) else {
            let resource = FHIRJSON.object([
                "resourceType": .string("QuestionnaireResponse"), "id": .string(String(response.id)), "status": .string("entered-in-error"),
            ])
            return QuestionnaireResponseMapping.Result(
                resource: resource, notMapped: notMapped + [NotMapped(linkId: "", reason: "the response could not be written as FHIR")])
        }
        return QuestionnaireResponseMapping.Result(resource: resource, notMapped: notMapped)
    }

    private static func readBack(_ count: Int) -> JSONValue.Budget {
        JSONValue.Budget(maxBytes: count, maxNodes: count)
    }

    /// Writes `response` as a `QuestionnaireResponse`'s compact JSON text (members in FHIR's
    /// order), and returns the results that had no FHIR reading.
    @discardableResult
    public func write(_ response: StoredResponse, to text: inout FHIRText) -> [NotMapped] {
        var stored: [UInt8] = []
        response.data.write(to: &stored, sortedKeys: false)
        var tape = JSONTape()
        // Text written from a value parses; were it ever not to, the answers are written as none.
        let written = try? tape.read(stored, budget: Self.readBack(stored.count)) { write(response, answers: $0, to: &text) }
        return written ?? write(response, answers: nil, to: &text)
    }

    /// Writes `response` with its answers read from `answers` (the app's `data`), or with none.
    func write(_ response: StoredResponse, answers data: JSONTape.Value?, to text: inout FHIRText) -> [NotMapped] {
        var answers = AnswerWriter()
        let patient = "Patient/\(response.participantId)"
        text.raw(#"{"resourceType":"QuestionnaireResponse","id":"#)
        text.string(String(response.id))
        if let meta = FHIRJSON.meta(versionId: "1", lastUpdated: response.receivedAt) {
            text.raw(#","meta":"#)
            text.value(meta)
        }
        if let run = response.runId {
            text.raw(",")
            text.append(identifierHead)
            text.string("\(response.participantId)/\(response.activityId)/\(run)")
            text.raw("}")
        }
        text.raw(",")
        text.append(questionnaireMember)
        text.raw(#","status":"completed","subject":{"reference":"#)
        text.string(patient)
        text.raw(#"},"authored":"#)
        text.string(
            QuestionnaireResponseMapping.authored(
                endTime: data?.member("endTime")?.text, submittedTime: data?.member("submittedTime")?.text, receivedAt: response.receivedAt))
        text.raw(#","source":{"reference":"#)
        text.string(patient)
        text.raw("}")
        let start = text.bytes.count
        text.raw(#","item":["#)
        if let results = data?.member("results"), answers.items(results.items, steps: steps, prefix: nil, into: &text) {
            text.raw("]")
        } else {
            text.truncate(to: start)
        }
        text.raw("}")
        return answers.notMapped
    }
}
