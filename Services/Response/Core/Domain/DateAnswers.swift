import Foundation
import StudyModels

/// A response's answers to date questions, for registration's anchored schedules
/// (`SubmissionFeed.Submission.dateAnswers`).
package enum DateAnswers {
    /// From the date results of a response (PostgreSQL's `$.results.**` of `resultType` "date",
    /// in the order it found them, forms included): each answered one by its key, the date as
    /// written. A later answer to the same key wins, as when the response is stored. Nil when
    /// there is none. Bounded: a response can carry any number of results, a page of the feed
    /// carries at most `maxDateAnswers` of them each, with keys of at most `maxKeyLength` scalars.
    package static func from(_ results: JSONValue) -> [String: String]? {
        guard case .array(let found) = results else { return nil }
        var answers: [String: String] = [:]
        for result in found {
            guard result["skipped"] != .bool(true), let key = result["key"]?.text, let value = result["value"]?.text,
                (1...SubmissionFeed.Submission.maxKeyLength).contains(key.unicodeScalars.count),
                ParticipantAnchors.day(value) != nil
            else { continue }
            if answers[key] == nil, answers.count == SubmissionFeed.Submission.maxDateAnswers { break }
            answers[key] = String(String.UnicodeScalarView(value.unicodeScalars.prefix(10)))
        }
        return answers.isEmpty ? nil : answers
    }
}
