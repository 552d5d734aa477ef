import Foundation
import PostgresNIO
import ServiceKit
import StudyModels

/// What a round of the count sweep reads of its participants, read for all of them at once:
/// four statements a round rather than three or five for each participant counted. A round's
/// completions and arrivals are bounded as a whole (`roundRows`) as well as each participant's
/// (`maxCompletions`): the participants a round could not hold whole are read one by one.
extension ParticipantRunStore {
    /// The most completions, and the most arrivals, one round reads at once: as many as one
    /// participant may have, so that a round holds no more than twice what one count could.
    package static let roundRows = maxCompletions

    package func histories(of wanted: [ParticipantHistoryRequest], now: Date) async throws -> [ParticipantHistoryRecord?] {
        try await histories(of: wanted, now: now, roundRows: Self.roundRows)
    }

    /// `histories(of:now:)` with the round's bound given (tests make it small).
    package func histories(of wanted: [ParticipantHistoryRequest], now: Date, roundRows: Int) async throws -> [ParticipantHistoryRecord?] {
        guard !wanted.isEmpty else { return [] }
        var participants = [Participant?](repeating: nil, count: wanted.count)
        for try await (position, userId, enrolledAt, withdrawnAt, deviceOS, tokenHash) in try await client.run(
            RoundParticipantsStatement(studyIds: wanted.map(\.studyId), userIds: wanted.map(\.userId)), pooling: pooling, logger: logger)
        {
            guard let index = Self.index(position, of: Array(wanted.indices)) else { continue }
            participants[index] = Participant(
                userId: userId, enrolledAt: enrolledAt, withdrawnAt: withdrawnAt, deviceOS: deviceOS, appTokenSHA256: tokenHash)
        }
        let found = wanted.indices.filter { participants[$0] != nil }
        let since = { (index: Int) in participants[index]?.enrolledAt ?? now }

        var completions = [[RunCompletion]](repeating: [], count: wanted.count)
        let completionsCut = try await readBounded(
            RoundCompletionsStatement(
                userIds: found.map { wanted[$0].userId }, studyIds: found.map { wanted[$0].studyId }, since: found.map(since),
                perParticipant: Self.maxCompletions, limit: roundRows + 1),
            positions: found, limit: roundRows, position: { $0.0 }
        ) { index, row in
            completions[index].append(RunCompletion(activityId: row.1, runId: row.2, source: .app, at: row.3))
        }
        for index in completionsCut {
            completions[index] = try await self.completions(userId: wanted[index].userId, studyId: wanted[index].studyId, since: since(index))
        }

        let hashed = found.filter { participants[$0]?.appTokenSHA256 != nil }
        let hash = { (index: Int) in participants[index]?.appTokenSHA256 ?? "" }
        var arrivals = [[ResponseArrival]](repeating: [], count: wanted.count)
        let arrivalsCut = try await readBounded(
            RoundArrivalsStatement(
                studyIds: hashed.map { wanted[$0].studyId }, tokenHashes: hashed.map(hash), since: hashed.map(since),
                perParticipant: Self.maxCompletions, limit: roundRows + 1),
            positions: hashed, limit: roundRows, position: { $0.0 }
        ) { index, row in
            arrivals[index].append(ResponseArrival(
                activityId: row.1, runId: row.2, receivedAt: row.3, finishedAt: row.4, offsetMinutes: row.5, stored: row.6))
        }
        for index in arrivalsCut {
            arrivals[index] = try await self.arrivals(studyId: wanted[index].studyId, appTokenSHA256: hash(index), since: since(index))
        }

        var anchors = [ParticipantAnchors](repeating: ParticipantAnchors(), count: wanted.count)
        let anchored = hashed.filter { wanted[$0].anchored }
        if !anchored.isEmpty {
            let studyIds = anchored.map { wanted[$0].studyId }
            let hashes = anchored.map(hash)
            for try await (position, activity, key, value) in try await client.run(
                RoundAnchorAnswersStatement(studyIds: studyIds, tokenHashes: hashes), pooling: pooling, logger: logger)
            {
                guard let index = Self.index(position, of: anchored), let day = ParticipantAnchors.day(value) else { continue }
                anchors[index].answers[activity, default: [:]][key] = day
            }
            for try await (position, key, value) in try await client.run(
                RoundAnchorPropertiesStatement(studyIds: studyIds, tokenHashes: hashes), pooling: pooling, logger: logger)
            {
                guard let index = Self.index(position, of: anchored), let day = ParticipantAnchors.day(value) else { continue }
                anchors[index].properties[key.lowercased()] = day
            }
        }
        return wanted.indices.map { index in
            participants[index].map {
                ParticipantHistoryRecord(participant: $0, completions: completions[index], arrivals: arrivals[index], anchors: anchors[index])
            }
        }
    }

    /// The element of `positions` a row's 1-based position names; nil for one the database should
    /// not have sent.
    private static func index<Element>(_ position: Int, of positions: [Element]) -> Element? {
        positions.indices.contains(position - 1) ? positions[position - 1] : nil
    }

    /// Reads `statement`'s rows (each a 1-based position among `positions` first, in order of
    /// position) into `add`; returns the participants whose rows may be cut by `limit`: when the
    /// round's bound was reached, the last position seen and those after it, whose rows are
    /// dropped here to be read one by one.
    private func readBounded<Statement: PostgresPreparedStatement>(
        _ statement: Statement, positions: [Int], limit: Int, position: (Statement.Row) -> Int, add: (Int, Statement.Row) -> Void
    ) async throws -> [Int] {
        guard !positions.isEmpty else { return [] }
        var rows: [Statement.Row] = []
        for try await row in try await client.run(statement, pooling: pooling, logger: logger) { rows.append(row) }
        var cutFrom = positions.count + 1
        if rows.count > limit, let last = rows.last.map(position) { cutFrom = last }
        for row in rows where position(row) < cutFrom {
            guard let index = Self.index(position(row), of: positions) else { continue }
            add(index, row)
        }
        return cutFrom <= positions.count ? Array(positions[(cutFrom - 1)...]) : []
    }
}

/// A participant a round counts, and whether their schedule counts from anchor dates.
package struct ParticipantHistoryRequest: Sendable, Equatable {
    package var studyId: String
    package var userId: UUID
    package var anchored: Bool

    package init(studyId: String, userId: UUID, anchored: Bool) {
        self.studyId = studyId
        self.userId = userId
        self.anchored = anchored
    }
}

/// What one count reads of a participant.
package struct ParticipantHistoryRecord: Sendable, Equatable {
    package var participant: ParticipantRunStore.Participant
    package var completions: [RunCompletion]
    package var arrivals: [ResponseArrival]
    package var anchors: ParticipantAnchors

    package init(
        participant: ParticipantRunStore.Participant, completions: [RunCompletion], arrivals: [ResponseArrival], anchors: ParticipantAnchors
    ) {
        self.participant = participant
        self.completions = completions
        self.arrivals = arrivals
        self.anchors = anchors
    }
}
