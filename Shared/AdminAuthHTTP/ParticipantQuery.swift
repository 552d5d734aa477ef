import ServiceKitHTTP
import StudyModels

/// The two names the admin APIs take for one participant in a query, checked where they are read,
/// the same way in every service: the hash of the participant id their app holds (how
/// registration and the response service name the same person) and their participant number (the
/// response service's `ParticipantId` column).
public enum ParticipantQuery {
    /// `text` as a hash of a participant id: 64 hexadecimal digits, ASCII only, counted by scalar
    /// (a fullwidth digit is a hex digit to `Character`, and is refused), answered in lower case.
    public static func appTokenSHA256(_ text: Substring) throws -> String {
        let value = String(text)
        guard TokenHash.isHexDigest(value) else {
            throw APIError.badRequest("appTokenSHA256 must be 64 hexadecimal digits", field: "appTokenSHA256")
        }
        return value.lowercased()
    }

    /// Up to `most` such hashes separated by commas, each answered in lower case.
    public static func appTokenSHA256s(_ text: Substring, most: Int) throws -> [String] {
        let hashes = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard hashes.count <= most, hashes.allSatisfy(TokenHash.isHexDigest) else {
            throw APIError.badRequest(
                "appTokenSHA256 must be up to \(most) hashes of 64 hexadecimal digits, separated by commas", field: "appTokenSHA256")
        }
        return hashes.map { $0.lowercased() }
    }

    /// `text` as a participant number: a positive whole number that fits 64 bits.
    public static func participantNumber(_ text: Substring) throws -> Int64 {
        guard let number = Int64(String(text)), number > 0 else {
            throw APIError.badRequest("participant must be a participant number (the ParticipantId column)", field: "participant")
        }
        return number
    }
}
