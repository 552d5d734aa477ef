import Foundation
import JSONText
import ServiceKit
import StudyModels

/// Moves one part of a study's responses in from a MyStudies 2.x deployment's Firestore
/// (docs/moving-in.md): each stored response rebuilt as its app sent it, stored as arrived at the
/// time the source received it, from the participant moved in before it; processed into the
/// study's tables and counted into runs like every response. A response stored before (by its
/// identity at the source) is not stored again. A dry run stores nothing.
package struct ResponseMoveIns: Sendable {
    package let store: MovedResponseStore

    package init(store: MovedResponseStore) {
        self.store = store
    }

    package func run(_ part: MovedResponsesPart, study: StudyCatalog.Study, dryRun: Bool, actor: String) async throws -> ResponseMoveInReport {
        var counts = ResponseMoveInReport.Counts()
        counts.read = part.responses.count
        var findings: [MoveInFinding] = []
        var rows: [MovedResponseStore.Row] = []
        for stored in part.responses {
            guard ScalarKey(stored.studyId) == ScalarKey(study.studyId) || ScalarKey(stored.studyId.uppercased()) == ScalarKey(study.key) else {
                counts.notImported += 1
                findings.append(MoveInFinding(studyId: stored.studyId, at: stored.document, effect: .notImported, message: "the response is another study's"))
                continue
            }
            switch MyStudiesAppResponse.rebuild(stored) {
            case .failure(let refusal):
                counts.notImported += 1
                findings.append(refusal.finding)
            case .success(let response):
                guard let receivedAt = response.receivedAt else {
                    counts.notImported += 1
                    findings.append(MoveInFinding(studyId: stored.studyId, at: stored.document, effect: .notImported, message: "the response has no time it was received"))
                    continue
                }
                rows.append(
                    MovedResponseStore.Row(
                        participantTokenHash: SecureToken.hash(response.participantId), activityId: response.activityId,
                        activityVersion: response.version, activityRunId: response.runId, metadata: response.metadata.serialized(),
                        data: response.data.serialized(), replayKey: SecureToken.hash("moved-in:" + stored.document), receivedAt: receivedAt))
            }
        }
        let outcomes = dryRun ? try await store.preview(rows, studyKey: study.key) : try await store.insert(rows, studyKey: study.key, actor: actor, source: part.source)
        for outcome in outcomes {
            switch outcome {
            case .stored(true): counts.new += 1
            case .stored(false): counts.alreadyImported += 1
            case .unknownParticipant: counts.unknownParticipant += 1
            }
        }
        if counts.unknownParticipant > 0 {
            findings.append(
                MoveInFinding(
                    studyId: study.studyId, at: "participantId", effect: .notImported,
                    message: "\(counts.unknownParticipant) responses are of participants not here: move the participants in first, then run this again"))
        }
        return ResponseMoveInReport(source: part.source, dryRun: dryRun, counts: counts, findings: findings)
    }
}
