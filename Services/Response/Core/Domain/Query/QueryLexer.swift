/// Splits a participant's LabKey SQL into tokens. Only what the grammar in `QueryParser` needs is
/// recognised; anything else (a backslash, a dollar quote, a stray NUL) is a syntax error here, so
/// no text the participant wrote ever reaches PostgreSQL except through the translator.
package struct QueryLexer {
    package enum Kind: Equatable, Sendable {
        /// An unquoted name or keyword, as written.
        case word(String)
        /// A double-quoted name, quotes removed and doubled quotes undone.
        case quotedName(String)
        /// A single-quoted string, quotes removed and doubled quotes undone.
        case string(String)
        /// Digits with at most one decimal point and an optional exponent.
        case number(String)
        case symbol(String)
        case end
    }

    package struct Token: Equatable, Sendable {
        package var kind: Kind
        /// The token as written, for error messages.
        package var text: String

        package func isKeyword(_ keyword: String) -> Bool {
            if case .word(let word) = kind { return word.uppercased() == keyword }
            return false
        }

        package func isSymbol(_ symbol: String) -> Bool { kind == .symbol(symbol) }
    }

    /// The participant's statement was too long or could not be split into tokens.
    package static let maxLength = 10_000

    package static func tokens(_ source: String) throws(QueryError) -> [Token] {
        guard source.utf8.count <= maxLength else {
            throw QueryError("The SQL is longer than \(maxLength) bytes.")
        }
        let characters = Array(source.unicodeScalars)
        var tokens: [Token] = []
        var index = 0

        func text(_ range: Range<Int>) -> String {
            var result = ""
            result.unicodeScalars.append(contentsOf: characters[range])
            return result
        }

        while index < characters.count {
            let character = characters[index]
            let next: Unicode.Scalar? = index + 1 < characters.count ? characters[index + 1] : nil
            if character.properties.isWhitespace {
                index += 1
            } else if character == "-" && next == "-" {
                while index < characters.count && characters[index] != "\n" { index += 1 }
            } else if character == "/" && next == "*" {
                guard let close = (index + 2..<max(index + 2, characters.count - 1)).first(where: {
                    characters[$0] == "*" && characters[$0 + 1] == "/"
                }) else { throw QueryError.syntax(near: "/*") }
                index = close + 2
            } else if character == "'" || character == "\"" {
                var value = ""
                var position = index + 1
                var closed = false
                while position < characters.count {
                    if characters[position] == character {
                        if position + 1 < characters.count && characters[position + 1] == character {
                            value.unicodeScalars.append(character)
                            position += 2
                            continue
                        }
                        closed = true
                        break
                    }
                    guard characters[position] != "\0" else { throw QueryError.syntax(near: text(index..<position)) }
                    value.unicodeScalars.append(characters[position])
                    position += 1
                }
                guard closed else { throw QueryError.syntax(near: text(index..<characters.count)) }
                let written = text(index..<position + 1)
                tokens.append(Token(kind: character == "'" ? .string(value) : .quotedName(value), text: written))
                index = position + 1
            } else if character.isASCIIDigit || (character == "." && next?.isASCIIDigit == true) {
                var position = index
                var seenPoint = false
                while position < characters.count,
                    characters[position].isASCIIDigit || (characters[position] == "." && !seenPoint)
                {
                    if characters[position] == "." { seenPoint = true }
                    position += 1
                }
                if position < characters.count, characters[position] == "e" || characters[position] == "E" {
                    var exponent = position + 1
                    if exponent < characters.count, characters[exponent] == "+" || characters[exponent] == "-" { exponent += 1 }
                    if exponent < characters.count, characters[exponent].isASCIIDigit {
                        position = exponent
                        while position < characters.count, characters[position].isASCIIDigit { position += 1 }
                    }
                }
                if position < characters.count, characters[position].isNameCharacter {
                    throw QueryError.syntax(near: text(index..<position + 1))
                }
                tokens.append(Token(kind: .number(text(index..<position)), text: text(index..<position)))
                index = position
            } else if character.isNameStart {
                var position = index
                while position < characters.count, characters[position].isNameCharacter { position += 1 }
                let word = text(index..<position)
                tokens.append(Token(kind: .word(word), text: word))
                index = position
            } else {
                let pair = next.map { String(character) + String($0) }
                if let pair, ["<=", ">=", "<>", "!=", "||"].contains(pair) {
                    tokens.append(Token(kind: .symbol(pair == "!=" ? "<>" : pair), text: pair))
                    index += 2
                } else if "(),.*=<>+-/%;".unicodeScalars.contains(character) {
                    tokens.append(Token(kind: .symbol(String(character)), text: String(character)))
                    index += 1
                } else {
                    throw QueryError.syntax(near: String(character))
                }
            }
        }
        tokens.append(Token(kind: .end, text: ""))
        return tokens
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
    fileprivate var isNameStart: Bool { properties.isAlphabetic || self == "_" }
    fileprivate var isNameCharacter: Bool { isNameStart || isASCIIDigit }
}

/// A participant query that cannot be run, with the message the app receives.
package struct QueryError: Error, Equatable, Sendable {
    package var message: String

    package init(_ message: String) { self.message = message }

    /// LabKey's parser message.
    package static func syntax(near token: String) -> QueryError {
        QueryError(token.isEmpty ? "Syntax error at end of input" : "Syntax error near '\(token)'")
    }

    package static func tableNotFound(_ name: String) -> QueryError {
        QueryError("Query or table not found: \(name)")
    }
}
