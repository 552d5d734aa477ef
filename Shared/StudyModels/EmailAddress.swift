/// A light check that catches typos; delivery is what proves an address.
public enum EmailAddress {
    public static func isPlausible(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !parts[1].hasPrefix(".")
            && !parts[1].hasSuffix(".") && text.count <= 254 && !text.contains(where: \.isWhitespace)
    }
}
