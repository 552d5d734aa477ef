/// The SHA-256 of the participant id a MyStudies app holds, as the services send it to each
/// other: how registration and the response service name the same participant.
public enum TokenHash {
    /// 64 lowercase hex digits, as the services write it.
    public static func isWellFormed(_ text: String) -> Bool {
        text.unicodeScalars.count == 64 && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }

    /// 64 hex digits in either case (ASCII only, counted by scalar): how a caller may write a
    /// SHA-256 it asks about; the receiver lowercases it.
    public static func isHexDigest(_ text: String) -> Bool {
        text.unicodeScalars.count == 64
            && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) || ("A"..."F").contains($0) }
    }
}
