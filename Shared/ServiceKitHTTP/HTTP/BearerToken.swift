import Hummingbird

extension Request {
    /// The token of an `Authorization: Bearer <token>` header (the scheme in any case, spaces
    /// around the token dropped), or nil when there is none or it is empty. Read scalar by scalar:
    /// a combining mark after the space would make "bearer " a different `Character` sequence.
    public var bearerToken: String? {
        guard let header = headers[.authorization] else { return nil }
        let scalars = Array(header.unicodeScalars)
        let scheme = Array("bearer ".unicodeScalars)
        guard scalars.count > scheme.count,
            zip(scalars, scheme).allSatisfy({ Unicode.Scalar($0.value | ($0.value < 0x80 && $0.properties.isUppercase ? 0x20 : 0)) == $1 })
        else { return nil }
        var token = String.UnicodeScalarView(scalars.dropFirst(scheme.count))
        while let first = token.first, first == " " || first == "\t" { token.removeFirst() }
        while let last = token.last, last == " " || last == "\t" { token.removeLast() }
        return token.isEmpty ? nil : String(token)
    }
}
