/// Text put into HTML (pages, e-mails, consent documents, SVG): `& < > " '` become character
/// references, so the result is safe both as element text and inside a quoted attribute.
public enum HTMLText {
    public static func escape(_ value: String) -> String {
        var out = ""
        escape(value, into: &out)
        return out
    }

    public static func escape(_ value: String, into out: inout String) {
        guard value.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            out += value
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
    }
}
