import Crypto
import Foundation
import StudyModels
import ServiceKit

/// Names from survey designs (list names, question keys) become PostgreSQL identifiers. They
/// cannot be bound as parameters, so they are only ever written through `quoted`, and names longer
/// than PostgreSQL keeps (63 bytes) are shortened with a hash of the whole name instead of being
/// silently truncated into each other.
package enum SQLName {
    package static let maxBytes = 63

    /// The identifier PostgreSQL will keep for `name`: the name itself when it fits, else a prefix
    /// and eight hex digits of its SHA-256.
    package static func identifier(for name: String) -> String {
        guard name.utf8.count > maxBytes else { return name }
        var prefix = ""
        for character in name {
            if prefix.utf8.count + String(character).utf8.count > maxBytes - 9 { break }
            prefix.append(character)
        }
        let digest = SHA256.hash(data: Data(name.utf8)).prefix(4).hexString
        return "\(prefix)_\(digest)"
    }

    /// `identifier` in double quotes, inner quotes doubled: safe to splice into SQL text. PostgreSQL
    /// cannot hold NUL in a name, and a name from outside may carry one: it becomes U+FFFD, a name
    /// no table or column has, so the statement fails as for any unknown name (never the process).
    package static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingScalars(["\0": "\u{FFFD}", "\"": "\"\""]) + "\""
    }

    /// The column beside a date answer's that keeps the offset it was answered at, in minutes
    /// east of UTC: the answer's column keeps the instant, so the pair gives back the wall-clock
    /// time the participant saw. `~` keeps it apart from question keys (a key ending in `~offset`
    /// is refused, `SurveySchema`).
    package static func offsetColumn(for sqlName: String) -> String {
        identifier(for: sqlName + offsetSuffix)
    }

    package static let offsetSuffix = "~offset"

    /// The schema that holds a study's tables.
    package static func schema(forStudy studyKey: String) -> String {
        identifier(for: "study_" + studyKey)
    }
}
