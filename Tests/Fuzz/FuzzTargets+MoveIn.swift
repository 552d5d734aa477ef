import Foundation
import JSONText
import StudyModels

/// The move-in's parsers (`studystack-import` and the move-in endpoints): what a MyStudies
/// deployment, its databases, its Firestore or FHIR store, or a LabKey server's exports hold.
extension FuzzTargets {
    /// A move-in export (`POST /admin/v1/apps/{appId}/move-in/studies`): each study read into
    /// its versions in two zones, and every version a document the study model can encode.
    static let myStudiesExport: Target = { bytes in
        guard let export = try? JSONDecoder.budgeted(maxNodes: 1_048_576).decode(MyStudiesStudyExport.self, from: Data(bytes))
        else { return }
        for study in export.studies {
            for zone in ["UTC", "Pacific/Chatham"] {
                let plan = MyStudiesStudyPlan.read(study, appId: "FUZZAPP", timeZone: TimeZone(identifier: zone) ?? .gmt)
                precondition(!plan.versions.isEmpty, "a plan always has the study as it is now")
                for document in plan.versions {
                    _ = StudyValidator.validate(document)
                    precondition((try? JSONEncoder().encode(document)) != nil, "a planned version encodes")
                }
            }
        }
    }

    /// One part of a MyStudies 2.x deployment's participants (`POST .../move-in/participants`, read
    /// within the body limit): the plan keeps every identity once (an account, an address, a
    /// participant id, a token, a site's name in its study) and every number within its bounds.
    static let myStudiesParticipants: Target = { bytes in
        guard let export = try? JSONDecoder().decode(MyStudiesParticipantExport.self, from: Data(bytes)) else { return }
        let named = export.enrolments.map(\.studyId) + export.sites.map(\.studyId) + export.invitations.map(\.studyId)
        let plan = MyStudiesParticipantPlan.read(export, studiesHere: Set(named.prefix(3).map { ScalarKey($0) }))
        precondition(plan.accounts.count <= export.accounts.count && plan.invitations.count <= export.invitations.count)
        precondition(Set(plan.accounts.map { ScalarKey($0.sourceUserId) }).count == plan.accounts.count, "an account twice")
        precondition(Set(plan.accounts.map { ScalarKey($0.email.lowercased()) }).count == plan.accounts.count, "an address twice")
        let participantIds = plan.accounts.flatMap { $0.studies.compactMap(\.participantId) }
        precondition(Set(participantIds.map { ScalarKey($0) }).count == participantIds.count, "a participant id twice")
        precondition(Set(plan.invitations.map { ScalarKey($0.token) }).count == plan.invitations.count, "a token twice")
        precondition(Set(plan.sites.map { ScalarKey("\($0.studyId)\u{0}\($0.name.lowercased())") }).count == plan.sites.count, "a site name twice")
        for study in plan.accounts.flatMap(\.studies) {
            precondition((0...100).contains(study.completion) && (0...100).contains(study.adherence))
            precondition(study.activities.allSatisfy { $0.completed >= 0 && $0.missed >= 0 && $0.total >= 0 })
            precondition(study.consents.allSatisfy { ($0.pdf?.count ?? 0) <= MyStudiesParticipantPlan.maxPDFBytes })
        }
    }

    /// A page of Firestore's `documents.list` (`studystack-import responses read`): read within
    /// the reader's budget, each document's typed values made plain, with the same field names,
    /// and written as JSON that reads back the same; then rebuilt as the app sent it.
    static let firestorePage: Target = { bytes in
        guard let page = try? JSONValue.parse(bytes, budget: .init(maxBytes: 1 << 20, maxNodes: 100_000, maxDepth: 64)) else { return }
        for document in page["documents"]?.array ?? [] {
            guard let plain = try? FirestoreValues.plain(fields: document["fields"]) else { continue }
            precondition(plain.object?.keys.map { ScalarKey($0) } == (document["fields"]?.object?.keys ?? []).map { ScalarKey($0) }, "field names changed")
            let text = Array(plain.serialized().utf8)
            precondition((try? JSONValue.parse(text, budget: .init(maxBytes: 4 << 20, maxNodes: 200_000, maxDepth: 64))) == plain, "plain JSON reads back otherwise")
            // Rebuilt as its app sent it (`POST .../move-in/responses`): never more steps than stored.
            let stored = MyStudiesStoredResponse(studyId: "S1", document: "d", createTime: document["createTime"]?.string, fields: plain)
            if case .success(let response) = MyStudiesAppResponse.rebuild(stored) {
                precondition(response.data["results"]?.array?.count == plain["results"]?.array?.count, "steps added or lost")
            }
        }
    }

    /// A LabKey-era server's exported lists (`studystack-import responses read-labkey`): tables of
    /// TSV (separated by NUL; each a name line, then the text; the last two are `Participant` and
    /// `ResponseMetadata`), rebuilt against a survey with a form within a form, a choice question
    /// and a task: never more responses than rows, nor more answers than steps.
    static let labKeyLists: Target = { bytes in
        let parts = text(bytes).split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3 else { return }
        var tables: [LabKeyListExport.Table] = []
        for part in parts {
            let lines = part.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard lines.count == 2, let table = try? LabKeyListExport.Table(name: lines[0], tsv: lines[1]) else { return }
            precondition(table.rows.allSatisfy { $0.count == table.columns.count }, "a row not as wide as its header")
            tables.append(table)
        }
        let export = LabKeyListExport(lists: Array(tables.dropLast(2)), participants: tables[tables.count - 2], responseMetadata: tables[tables.count - 1])
        let outcome = LabKeyResponseRebuild(study: labKeyStudy, zone: TimeZone(identifier: "America/New_York") ?? .gmt).rebuild(export)
        precondition(outcome.responses.count <= outcome.rowsRead, "more responses than rows")
        for response in outcome.responses {
            precondition((response.fields["results"]?.array?.count ?? 0) <= 4, "more answers than steps")
            guard case .success = MyStudiesAppResponse.rebuild(response) else { preconditionFailure("a rebuilt response the import cannot read") }
        }
    }

    /// A page of a MyStudies 2.x deployment's FHIR store (`studystack-import responses read-fhir`):
    /// each resource taken back as a stored response, and rebuilt as its app sent it: one step a
    /// top-level item, a questionnaire reference only of FHIR ids.
    static let fhirResponses: Target = { bytes in
        guard let bundle = try? JSONValue.parse(bytes, budget: .init(maxBytes: 1 << 20, maxNodes: 100_000, maxDepth: 64)) else { return }
        for entry in bundle["entry"]?.array ?? [] {
            guard let resource = entry["resource"] else { continue }
            if let reference = MyStudiesFHIRResponse.questionnaire(resource) {
                precondition(!reference.id.contains("/") && !reference.versionId.contains("/") && reference.id != ".." && reference.versionId != "..",
                    "a questionnaire reference that names another path")
            }
            guard case .success(let fields) = MyStudiesFHIRResponse.fields(resource, version: "1") else { continue }
            precondition(fields["results"]?.array?.count == resource["item"]?.array?.count ?? 0, "steps added or lost")
            let stored = MyStudiesStoredResponse(studyId: "S1", document: "d", createTime: nil, fields: fields)
            guard case .success = MyStudiesAppResponse.rebuild(stored) else { preconditionFailure("a read resource the import cannot take") }
        }
    }

    static let labKeyStudy: MyStudiesStudyExport.Study = {
        let text = """
            {"activity": {"metadata": {"activityId": "S", "version": "1", "lastModified": "2017-05-10T07:59:20.000-0400"}, "steps": [
              {"type": "question", "resultType": "numeric", "key": "n", "format": {"style": "Integer"}},
              {"type": "question", "resultType": "textChoice", "key": "c"},
              {"type": "form", "resultType": "grouped", "key": "g", "steps": [
                {"type": "question", "resultType": "date", "key": "d", "format": {"style": "Date-Time"}},
                {"type": "form", "resultType": "grouped", "key": "h", "steps": [{"type": "question", "resultType": "boolean", "key": "b"}]}]},
              {"type": "task", "resultType": "towerOfHanoi", "key": "t"}]}}
            """
        let reply = try? JSONValue.parse(Array(text.utf8), budget: .init(maxBytes: 1 << 16, maxNodes: 1_000))
        return MyStudiesStudyExport.Study(
            listing: .object(JSONObject(pairs: [("studyId", .string("FUZZ"))])), activities: [.init(activityId: "S", version: "1", reply: reply)])
    }()
}
