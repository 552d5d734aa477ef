import CMSEnvelope
import ConsoleCore
import FHIR
import Foundation
import JSONSchema
import JSONText
import SageAssessments
import RegistrationCore
import RegistrationHTTP
import ResponseCore
import ResponseHTTP
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels
import ZipArchive

/// Every parser and validator an outside party's bytes reach, each as a function of arbitrary
/// bytes. A target must return for every input: a trap (overflow, a reversed range, an index out
/// of bounds, `!` on nil) is what the fuzzer looks for. Where a rule must hold whatever the input
/// (an escaped value cannot leave its quotes, a header cannot gain a line), the target checks it
/// and traps when it does not, so the fuzzer reports it as it reports a crash.
enum FuzzTargets {
    typealias Target = @Sendable ([UInt8]) -> Void

    static let all: [(name: String, run: Target)] = [
        ("study-document", studyDocument),
        ("activity", activity),
        ("app-envelope", appEnvelope),
        ("process-response", processResponse),
        ("stored-answers", storedAnswers),
        ("multipart", multipart),
        ("schema-protocol", schemaProtocol),
        ("labkey-sql", labKeySQL),
        ("labkey-parameters", labKeyParameters),
        ("console-form", consoleForm),
        ("invitation-csv", invitationCSV),
        ("wire-formats", wireFormats),
        ("mail-header", mailHeader),
        ("json-schema", jsonSchema),
        ("sage-assessment", sageAssessment),
        ("zip-archive", zipArchive),
        ("sage-archive", sageArchive),
        ("participant-timeline", participantTimeline),
        ("mystudies-export", myStudiesExport),
        ("mystudies-participants", myStudiesParticipants),
        ("firestore-page", firestorePage),
        ("labkey-lists", labKeyLists),
        ("fhir-responses", fhirResponses),
    ]

    static func named(_ name: String) -> Target? { all.first { $0.name == name }?.run }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// The draft a study's admin saves (`PUT .../draft`, the console's document upload): decoded,
    /// each activity expanded into runs (checked or not: a stored document may predate a check),
    /// validated, its activities listed as the apps read them.
    static let studyDocument: Target = { bytes in
        guard let document = try? JSONDecoder().decode(StudyDocument.self, from: Data(bytes)) else { return }
        let engine = ScheduleEngine(studyZone: TimeZone(identifier: document.timeZone) ?? .gmt, launchedAt: Date(timeIntervalSince1970: 1.3e9))
        let participants = [
            ParticipantClock(zone: .gmt, joinedAt: Date(timeIntervalSince1970: 1.8e9), platform: .ios),
            ParticipantClock(zone: TimeZone(identifier: "Pacific/Apia") ?? .gmt, joinedAt: Date(timeIntervalSince1970: 1.325e9), platform: .android),
        ]
        for activity in document.activities {
            for participant in participants {
                let runs = engine.runs(
                    of: activity, for: participant, anchorDay: 15_000, before: participant.joinedAt.addingTimeInterval(2 * 366 * 86_400))
                precondition(runs.count <= ScheduleEngine.maxRuns && zip(runs, runs.dropFirst()).allSatisfy { $0.runId < $1.runId })
            }
        }
        let problems = StudyValidator.validate(document)
        guard problems.isEmpty else { return }
        for activity in document.activities {
            _ = VersionCounters.label(of: activity, version: 1)
            _ = ActivityDesign(activity, in: document, activityVersion: 1).served(language: nil)
        }
    }

    /// One activity in the apps' JSON (`PUT .../draft/activities/{id}`).
    static let activity: Target = { bytes in
        _ = try? ActivityImport.parse(Data(bytes))
    }

    /// A body of the apps' legacy calls: one JSON object whose members are the parameters.
    static let appEnvelope: Target = { bytes in
        for keep in [false, true] {
            guard let members = LegacyEnvelope.members(ofBody: bytes, keepingCompoundText: keep) else { return }
            for member in members { _ = member.value?.serialized() }
        }
    }

    /// `processResponse`'s body: the checks made before it is stored, and each answer's date read
    /// as processing reads it.
    static let processResponse: Target = { bytes in
        guard let members = LegacyEnvelope.members(ofBody: bytes, keepingCompoundText: true) else { return }
        for member in members {
            if let text = member.text { _ = ResponseSubmission.escapesNUL(text) }
            if case .string(let value)? = member.value { _ = ResponseShredder.answerDateAndOffset(value) }
            if let text = member.text, let data = try? JSONValue.parse(Array(text.utf8), budget: .studyDocument) {
                _ = try? SurveySchema.derive(fromDesign: Data(data.serialized().utf8))
            }
        }
    }

    /// A response's answers as stored (`responses.data`), read where they lie as the FHIR Bulk
    /// export reads them: the tape accepts and refuses what the parser does and reads the same
    /// values, and the line the export writes from them is JSON.
    static let storedAnswers: Target = { bytes in
        var tape = JSONTape()
        let parsed = try? JSONValue.parse(bytes, budget: .responseAnswers)
        let read = try? tape.read(bytes, budget: .responseAnswers) { $0.jsonValue }
        precondition(parsed == read, "the tape and the parser read one text differently")
        let response = StoredResponse(
            id: 1, studyId: "FUZZ", participantId: 1, activityId: "survey", version: "1.0", runId: "1", data: .object([:]),
            receivedAt: Date(timeIntervalSince1970: 1.8e9), design: nil)
        var mappers = QuestionnaireResponseMapping.Mappers(naming: FHIRNaming(base: "https://fuzz.example.org/fhir/r4"))
        var line = FHIRText()
        mappers.write(response, answers: bytes, to: &line)
        precondition(
            (try? JSONValue.parse(line.bytes, budget: JSONValue.Budget(maxBytes: line.bytes.count, maxNodes: line.bytes.count))) != nil,
            "the export wrote a line that is not JSON")
    }

    /// A `multipart/form-data` body (the console's uploads); the first line is the boundary.
    static let multipart: Target = { bytes in
        let newline = bytes.firstIndex(of: 0x0A) ?? bytes.endIndex
        let boundary = text(Array(bytes[..<newline]))
        let body = newline < bytes.endIndex ? Array(bytes[(newline + 1)...]) : []
        _ = MultipartFormData.boundary(contentType: "multipart/form-data; " + boundary)
        _ = try? MultipartFormData.parts(body, boundary: boundary, maxParts: 100)
    }

    /// A schema-app protocol (`POST .../schema/import`): checked, imported, and planned for a
    /// participant as the app would plan it.
    static let schemaProtocol: Target = { bytes in
        let check = SchemaProtocolCheck.check(text: bytes)
        let imported = SchemaImport.read(bytes)
        guard check.errors.isEmpty, imported.errors.isEmpty, let value = try? JSONValue.parse(bytes, budget: .studyDocument) else { return }
        let plan = SchemaTaskPlan.make(
            protocol: value, seed: 42, enrolledAt: Date(timeIntervalSince1970: 1_790_000_000),
            zone: TimeZone(identifier: "Australia/Lord_Howe") ?? .gmt)
        _ = plan.due(at: Date(timeIntervalSince1970: 1_800_000_000), completed: [])
    }

    /// A participant's or researcher's LabKey SQL, parsed and written as PostgreSQL against the
    /// service's own views.
    static let labKeySQL: Target = { bytes in
        guard let statement = try? QueryParser.parse(text(bytes)) else { return }
        let catalogs = ResearcherSchemas.catalogs(lists: nil)
        _ = try? QueryTranslator(schemas: catalogs, defaultSchema: ResearcherSchemas.mobileAppStudy, maxRows: 1_000)
            .translate(statement)
    }

    /// `selectRows` and `executeSql`'s parameters, one `name=value` a line; every value written as
    /// an SQL literal must stay one literal.
    static let labKeyParameters: Target = { bytes in
        var parameters: [String: [String]] = [:]
        for line in text(bytes).split(separator: "\n", omittingEmptySubsequences: false) {
            let pair = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            parameters[String(pair[0]), default: []].append(pair.count > 1 ? String(pair[1]) : "")
        }
        let catalog = ResearcherSchemas.catalogs(lists: nil)[ResearcherSchemas.mobileAppStudy]!
        if let request = try? SelectRowsRequest(parameters: parameters, catalog: catalog) {
            _ = try? QueryTranslator(catalog: catalog, maxRows: 1_000).translate(request.statement)
        }
        for name in ["maxRows", "offset", "query.offset"] { _ = try? QueryStatement.pagingCount(parameters[name]?.first, for: name) }
        // A literal holds whatever it is given, and only its own quotes are quotes.
        for value in parameters.values.joined() {
            let literal = QueryTranslator.literal(value)
            let inner = literal.unicodeScalars.dropFirst().dropLast()
            precondition(literal.unicodeScalars.first == "'" && literal.unicodeScalars.last == "'")
            precondition(Self.quotesArePaired(inner), "a literal's quote was left single: \(literal)")
        }
    }

    /// Inside a literal every quote is one of a doubled pair.
    static func quotesArePaired(_ scalars: Substring.UnicodeScalarView) -> Bool {
        var run = 0
        for scalar in scalars {
            if scalar == "'" { run += 1 } else {
                if run % 2 == 1 { return false }
                run = 0
            }
        }
        return run % 2 == 0
    }

    /// A console form (urlencoded, as a browser posts it), with its row operation applied and
    /// then saved into a study's overview and consent sections; the same bytes as the text of a
    /// consent PDF.
    static let consoleForm: Target = { bytes in
        guard let form = try? FormFields(urlencoded: bytes) else { return }
        let document: JSONValue = .object(["studyId": .string("FUZZ"), "overview": .array([]), "consent": .object([:])])
        for section in [StudySection.overview, StudySection.consent, StudySection.notifications] {
            if let op = form["op"], let edit = FormEdit(op) { _ = section.editing(form, edit) }
            _ = section.completingSavedRows(form, from: document)
            _ = section.views(values: form, problems: [], spanish: false, readOnly: false)
            _ = try? section.applying(form, to: document)
        }
        // A PDF's text as pdftotext writes it, made the consent's paragraphs: only escaped text.
        if let html = ConsentFromPDF.html(fromText: text(bytes)) {
            precondition(!html.contains("<script") && html.hasPrefix("<p>"), "a PDF's text became markup")
        }
    }

    /// An invitation CSV (`POST .../invitations/import`).
    static let invitationCSV: Target = { bytes in
        _ = try? AdminInvitationRoutes.wanted(fromCSV: text(bytes))
    }

    /// Version labels, the date and time formats the apps and documents send, and base64url (the
    /// console's cookie, tokens, the data grid's cursor).
    static let wireFormats: Target = { bytes in
        let value = text(bytes)
        _ = WireDates.version(fromLabel: value)
        _ = LocalTimes.date(value)
        _ = LocalTimes.time(value)
        _ = LocalTimes.dateTime(value)
        _ = ResponseShredder.answerDateAndOffset(value)
        _ = UTCDay.days(from: value, to: "2026-12-31")
        _ = WholeNumber.parse(value, in: 0...1_000_000)
        _ = try? QueryStatement.rowCount(value, for: "LIMIT")
        if LocalTimes.date(value) != nil { _ = WireDates.format(date: value, time: nil, in: "America/St_Johns") }
        // A cookie, token or cursor: one spelling per value, so what decodes encodes back to itself.
        if let decoded = Base64URL.decode(value) { precondition(Base64URL.encode(decoded) == value, "two spellings of one value") }
        _ = TableGridQuery.Cursor.decode(value)
        if let day = ParticipantAnchors.day(value) { precondition(ScheduleEngine.anchorDays.contains(day)) }
        // What the feed carries of a response's date answers, and the property dates registration takes.
        if let results = try? JSONValue.parse(bytes, budget: .studyDocument) {
            precondition((DateAnswers.from(results)?.count ?? 0) <= SubmissionFeed.Submission.maxDateAnswers)
        }
        if let dates = try? JSONDecoder().decode(PropertyDates.self, from: Data(bytes)) { _ = dates.isWellFormed }
    }

    /// A mail's headers from a study name, a subject and addresses an admin or participant chose:
    /// whatever they hold, the header block keeps its own lines.
    static let mailHeader: Target = { bytes in
        let parts = text(bytes).split(separator: "\u{0}", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let subject = parts[0]
        let to = parts.count > 1 ? parts[1] : "p@example.org"
        let message = MailMessage(from: "StudyStack <no-reply@example.org>", to: to, subject: subject, text: "t", html: "<p>t</p>")
        let wire = message.rfc5322(messageId: "fuzz0123456789ab")
        let header = wire.components(separatedBy: "\r\n\r\n")[0]
        let names = header.components(separatedBy: "\r\n").filter { !$0.hasPrefix(" ") }.map { $0.prefix { $0 != ":" } }
        precondition(names.sorted() == ["Content-Type", "Date", "From", "MIME-Version", "Message-ID", "Subject", "To"],
                     "a header was added: \(names)")
        precondition(header.unicodeScalars.allSatisfy { $0 == "\r" || $0 == "\n" || TextRules.isSingleLine(String($0)) },
                     "a control character in the header block")
    }

    /// A JSON Schema compiled from the bytes (the compiler, `$id`/`$ref` resolution, the ECMA-262
    /// translation, formats asserted), and the same bytes as a document checked against it and
    /// against a fixed schema that uses every keyword. The yes/no check and the full report must
    /// agree. A fuzzed schema's own patterns are not run: ICU's backtracking has no time limit
    /// reachable through Foundation, and the product compiles schemas only from the files it
    /// ships, never from a request (docs/security.md).
    static let jsonSchema: Target = { bytes in
        guard let value = try? JSONValue.parse(bytes, budget: .studyDocument) else { return }
        if let schema = try? JSONSchema(value, at: "https://fuzz.example/schema.json", assertsFormats: true), !mentionsPatterns(value) {
            precondition(schema.isValid(value) == schema.violations(of: value).isEmpty, "the check and the report disagree")
        }
        if let fixed = everyKeyword {
            precondition(fixed.isValid(value) == fixed.violations(of: value).isEmpty, "the check and the report disagree")
        }
    }

    static func mentionsPatterns(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let members): members.keys.contains { $0 == "pattern" || $0 == "patternProperties" || $0 == "format" } || members.values.contains(where: mentionsPatterns)
        case .array(let items): items.contains(where: mentionsPatterns)
        default: false
        }
    }

    static let everyKeyword: JSONSchema? = {
        let text = ##"""
            {"$id": "https://fuzz.example/every.json", "definitions": {"node": {"type": "object",
              "properties": {"identifier": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9_.-]+$"},
                             "type": {"enum": ["section", "instruction", "choiceQuestion"]},
                             "steps": {"type": "array", "items": {"$ref": "#/definitions/node"}, "uniqueItems": true, "maxItems": 50},
                             "duration": {"type": "number", "multipleOf": 0.25, "exclusiveMinimum": 0, "maximum": 86400},
                             "date": {"type": "string", "format": "date-time"}, "uri": {"format": "uri"}},
              "patternProperties": {"^x-": true}, "additionalProperties": {"not": {"type": "null"}},
              "required": ["identifier"], "dependencies": {"steps": ["type"], "duration": {"required": ["type"]}},
              "propertyNames": {"maxLength": 40}, "minProperties": 1, "maxProperties": 20,
              "if": {"properties": {"type": {"const": "section"}}}, "then": {"required": ["steps"]}, "else": {"not": {"required": ["steps"]}},
              "oneOf": [{"required": ["identifier"]}, {"required": ["id"]}], "anyOf": [true, false],
              "allOf": [{"contains": {"type": "string"}}, {}]}},
             "anyOf": [{"$ref": "#/definitions/node"}, {"type": "array", "items": [{"type": "integer"}], "additionalItems": {"$ref": "#"}}]}
            """##
        guard let schema = try? JSONValue.parse(Array(text.utf8), budget: .studyDocument) else { return nil }
        return try? JSONSchema(schema, assertsFormats: true)
    }()

    /// A Sage assessment as `PUT .../draft/assessments/{identifier}` reads it: checked against
    /// Sage's mended schemas and rules, made into an activity, and that activity's steps checked
    /// as the draft's save checks them. An activity made from an assessment with no error must
    /// pass the study model's checks of its steps, or be Sage-only with a reason.
    static let sageAssessment: Target = { bytes in
        guard let schemas = sageSchemas, let document = try? JSONValue.parse(bytes, budget: .studyDocument) else { return }
        let check = AssessmentCheck.check(document, schemas: schemas)
        guard check.errors.isEmpty else { return }
        let imported = AssessmentImport(document)
        let study = StudyDocument(studyId: "FUZZ", appId: "FUZZ", name: "Fuzz", activities: [imported.activity])
        let stepProblems = StudyValidator.validate(study).filter { $0.pointer.hasPrefix("/activities/0/steps") }
        precondition(stepProblems.isEmpty || imported.activity.assessment?.isSageOnly == true, "a served activity with problems: \(stepProblems)")
    }

    static let sageSchemas: SageSchemaSet? = try? SageSchemaSet.bundled()

    /// A ZIP archive as a participant's phone might upload one: read within limits, or refused,
    /// then read as a Sage result archive. What is read must keep to the limits, hold only names
    /// that stay in their folder, and give each answer path once.
    static let zipArchive: Target = { bytes in
        let limits = ZipArchive.Limits(maxFiles: 100, maxTotalBytes: 8 << 20, maxFileBytes: 4 << 20, maxRatio: 200)
        guard let archive = try? ZipArchive(bytes, limits: limits) else { return }
        precondition(archive.files.count <= limits.maxFiles && archive.files.reduce(0) { $0 + $1.bytes.count } <= limits.maxTotalBytes)
        precondition(archive.files.allSatisfy { !$0.name.hasPrefix("/") && !$0.name.split(separator: "/").contains("..") })
        // Read on as a Sage result archive: its manifest, result and answers.
        if let schemas = sageSchemas, let result = try? ResultArchive(archive, schemas: schemas) {
            precondition(Set(result.answers.map(\.path)).count == result.answers.count, "an answer path twice")
        }
    }

    /// The fuzzing study's throwaway key pair (Tests/Fixtures/fuzz-study-key), for which the
    /// corpus's sealed archive is sealed.
    static let fuzzStudyKey: StudyKeyPair? = {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz-study-key")
        guard let key = try? Data(contentsOf: folder.appendingPathComponent("key.der")),
            let certificate = try? Data(contentsOf: folder.appendingPathComponent("certificate.der"))
        else { return nil }
        return StudyKeyPair(privateKeyDER: Array(key), certificateDER: Array(certificate))
    }()

    /// An upload to `POST /sage/v1/studies/{studyId}/archives` (or a completed Bridge upload):
    /// opened when it is CMS EnvelopedData, then read as a ZIP and as Sage's archive format. What
    /// is accepted must be a ZIP within the archive limits whose key names it.
    static let sageArchive: Target = { bytes in
        guard let schemas = sageSchemas, let key = fuzzStudyKey else { return }
        guard let reception = try? SageArchiveReception.read(bytes, key: key, schemas: schemas) else { return }
        precondition(reception.zip.starts(with: [0x50, 0x4B]), "an accepted archive that is not a ZIP")
        precondition(reception.files.count <= ResultArchive.limits.maxFiles)
        precondition(!reception.idempotencyKey.isEmpty && !reception.assessmentIdentifier.isEmpty)
        precondition(reception.data[SageAnswers.member]?.array?.count ?? 0 <= ResultArchive.maxAnswers)
    }

    /// A study document's activities expanded together for one participant over a year, as the
    /// runs endpoint and the count sweep expand them (`ParticipantTimeline`): never more than its
    /// budget, cut at a time with every run before it and none after. The budget is the
    /// platform's own; the memory limits of `make fuzz` fail an input that makes it hold more.
    static let participantTimeline: Target = { bytes in
        guard let document = try? JSONDecoder().decode(StudyDocument.self, from: Data(bytes)), !document.activities.isEmpty else { return }
        let schedule = StudySchedule(
            studyId: "FUZZ", version: 1, timeZone: document.timeZone, launchedAt: Date(timeIntervalSince1970: 1.3e9),
            activities: document.activities)
        let joined = Date(timeIntervalSince1970: 1.79e9)
        let maxRuns = 5_000
        let timeline = ParticipantTimeline.build(
            schedule: schedule, joinedAt: joined, leftAt: nil, platform: .android, arrivals: [], appCompletions: [],
            from: joined, to: joined.addingTimeInterval(366 * 86_400), now: joined.addingTimeInterval(30 * 86_400), maxRuns: maxRuns)
        precondition(timeline.standings.count <= maxRuns, "a timeline past its budget")
        if let cutAt = timeline.cutAt {
            precondition(timeline.standings.allSatisfy { $0.run.start < cutAt }, "a run at or after the cut")
        }
    }
}
