/// JSON Schema's `pattern` is an ECMA-262 regular expression; Foundation's `NSRegularExpression`
/// is ICU's dialect. This rewrites the parts where the two read the same text differently, so
/// that a pattern means here what it means in the browser that wrote it:
///
/// - `\d`, `\w` and their negations are ASCII classes in ECMA-262 and Unicode classes in ICU;
///   `\s` is ECMA-262's own list of white space (ICU's lacks U+FEFF).
/// - `$` ends the input in ECMA-262 (without the `m` flag); in ICU it also matches before a
///   final line break. It becomes `\z`.
/// - Inside a class, a bare `[` opens a nested set and `&` is an operator in ICU; in ECMA-262
///   both are literal. `\b` inside a class is a backspace.
/// - `\u{…}` becomes ICU's `\x{…}`.
/// - An escaped letter that ECMA-262 does not define (`\a`, `\z`, `\Q`, …) is refused rather
///   than given ICU's meaning.
///
/// What is still ICU's: `.` also stops at U+0085, and ICU accepts a few constructs ECMA-262
/// refuses (possessive quantifiers, atomic groups) with ICU's meaning.
enum ECMARegex {
    struct TranslationError: Error, Equatable, Sendable {
        var reason: String
    }

    private static let space = "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}"
    private static let word = "A-Za-z0-9_"
    private static let digit = "0-9"
    /// Letters ECMA-262 gives a meaning after a backslash (with the `u` flag, every other escaped
    /// letter is a syntax error).
    private static let ecmaLetterEscapes: Set<Unicode.Scalar> = ["d", "D", "w", "W", "s", "S", "b", "B", "f", "n", "r", "t", "v", "c", "x", "u", "k", "p", "P"]

    static func icuPattern(for source: String) throws(TranslationError) -> String {
        let scalars = Array(source.unicodeScalars)
        var out = String.UnicodeScalarView()
        var inClass = false
        var index = 0
        func append(_ text: String) { out.append(contentsOf: text.unicodeScalars) }
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == "\\" {
                guard index < scalars.count else { throw TranslationError(reason: "it ends with a lone backslash") }
                let escaped = scalars[index]
                index += 1
                switch escaped {
                case "d": append(inClass ? digit : "[\(digit)]")
                case "D": append("[^\(digit)]")
                case "w": append(inClass ? word : "[\(word)]")
                case "W": append("[^\(word)]")
                case "s": append(inClass ? space : "[\(space)]")
                case "S": append("[^\(space)]")
                case "b" where inClass: append("\\x{08}")
                case "u" where index < scalars.count && scalars[index] == "{":
                    append("\\x")
                case "c":
                    // A control letter: ICU reads \cX for an ASCII letter in either case.
                    guard index < scalars.count, scalars[index].properties.isAlphabetic, scalars[index].isASCII else {
                        throw TranslationError(reason: "\\c must be followed by a letter")
                    }
                    append("\\c")
                    out.append(Unicode.Scalar(UInt8(scalars[index].value) & 0xDF))
                    index += 1
                default:
                    if escaped.isASCII, escaped.properties.isAlphabetic, !ecmaLetterEscapes.contains(escaped) {
                        throw TranslationError(reason: "\\\(escaped) is not an escape ECMA-262 defines")
                    }
                    out.append("\\")
                    out.append(escaped)
                }
                continue
            }
            if inClass {
                switch scalar {
                case "]": inClass = false; out.append(scalar)
                case "[", "&": out.append("\\"); out.append(scalar)
                default: out.append(scalar)
                }
                continue
            }
            switch scalar {
            case "[":
                // ECMA-262's empty class matches nothing and its complement anything; ICU has
                // neither spelling.
                if index < scalars.count, scalars[index] == "]" {
                    append("(?!)")
                    index += 1
                    continue
                }
                if index + 1 < scalars.count, scalars[index] == "^", scalars[index + 1] == "]" {
                    append("[\\x{0}-\\x{10FFFF}]")
                    index += 2
                    continue
                }
                inClass = true
                out.append(scalar)
                // The complement's "^" is not a literal to escape.
                if index < scalars.count, scalars[index] == "^" {
                    out.append("^")
                    index += 1
                }
            case "(" where index < scalars.count && scalars[index] == "?":
                // Groups ECMA-262 knows: (?:…), (?=…), (?!…), (?<=…), (?<!…) and (?<name>…). ICU's
                // comments and inline flags would change the meaning of what follows.
                let next = index + 1 < scalars.count ? scalars[index + 1] : " "
                let afterNext = index + 2 < scalars.count ? scalars[index + 2] : " "
                let known = next == ":" || next == "=" || next == "!"
                    || (next == "<" && (afterNext == "=" || afterNext == "!" || afterNext.properties.isAlphabetic || afterNext == "_" || afterNext == "$"))
                guard known else { throw TranslationError(reason: "(?\(next) is not a group ECMA-262 defines") }
                out.append(scalar)
            case "$": append("\\z")
            default: out.append(scalar)
            }
        }
        if inClass { throw TranslationError(reason: "a character class is not closed") }
        return String(out)
    }
}
