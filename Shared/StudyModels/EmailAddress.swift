/// A light check that catches typos; delivery is what proves an address.
public enum EmailAddress {
    /// Read scalar by scalar: no white space or control character anywhere (an address goes into
    /// a mail header), at most 254 scalars.
    public static func isPlausible(_ text: String) -> Bool {
        let scalars = text.unicodeScalars
        guard scalars.count <= 254,
            !scalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control })
        else { return false }
        let parts = scalars.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && parts[1].first != "." && parts[1].last != "."
    }
}
