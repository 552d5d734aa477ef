import JSONText
import ServiceKit
import StudyModels

/// The public key set a SMART Backend Services client is registered with (docs/fhir.md,
/// Authorisation): what a study admin pastes in the console or posts to the admin API, checked
/// before it is kept. Only the two algorithms SMART asks servers to support are taken: RSA keys
/// of 2048 bits or more for RS384, and P-384 keys for ES384. A key set with a private key in it
/// is refused: the client's private key must never leave the client.
package enum SMARTClientKeys {
    package static let maxBytes = 64 << 10
    package static let maxKeys = 10

    package enum Algorithm: String, Sendable, CaseIterable {
        case rs384 = "RS384"
        case es384 = "ES384"
    }

    /// One key, as kept: its id, its algorithm and the JWK with `alg` written out.
    package struct Key: Sendable, Equatable {
        package var kid: String
        package var algorithm: Algorithm
        package var jwk: JSONValue
    }

    /// The keys of a JWKS document, or each problem by JSON Pointer.
    package static func keys(fromJWKS bytes: [UInt8]) -> Result<[Key], ProblemList> {
        guard bytes.count <= maxBytes else {
            return .failure(ProblemList([ValidationProblem(pointer: "/jwks", message: "is larger than \(maxBytes) bytes")]))
        }
        guard let document = try? JSONValue.parse(bytes, budget: JSONValue.Budget(maxBytes: maxBytes, maxNodes: 2_000, maxDepth: 8)) else {
            return .failure(ProblemList([ValidationProblem(pointer: "/jwks", message: "is not a JSON object")]))
        }
        return keys(fromJWKS: document)
    }

    package static func keys(fromJWKS document: JSONValue) -> Result<[Key], ProblemList> {
        guard case .array(let entries)? = document["keys"] else {
            return .failure(ProblemList([ValidationProblem(pointer: "/jwks/keys", message: "must be a list of keys (a JWK Set)")]))
        }
        guard (1...maxKeys).contains(entries.count) else {
            return .failure(ProblemList([ValidationProblem(pointer: "/jwks/keys", message: "must hold 1 to \(maxKeys) keys")]))
        }
        var problems: [ValidationProblem] = []
        var keys: [Key] = []
        for (index, entry) in entries.enumerated() {
            let pointer = "/jwks/keys/\(index)"
            switch key(entry) {
            case .success(let key):
                if keys.contains(where: { $0.kid.unicodeScalars.elementsEqual(key.kid.unicodeScalars) }) {
                    problems.append(ValidationProblem(pointer: "\(pointer)/kid", message: "is the id of another key of the set"))
                } else {
                    keys.append(key)
                }
            case .failure(let list):
                problems += list.problems.map { ValidationProblem(pointer: pointer + $0.pointer, message: $0.message) }
            }
        }
        return problems.isEmpty ? .success(keys) : .failure(ProblemList(problems))
    }

    private static let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    private static func key(_ entry: JSONValue) -> Result<Key, ProblemList> {
        func problem(_ member: String, _ message: String) -> Result<Key, ProblemList> {
            .failure(ProblemList([ValidationProblem(pointer: member.isEmpty ? "" : "/\(member)", message: message)]))
        }
        guard case .object(var members) = entry else { return problem("", "must be a JWK (an object)") }
        if let secret = privateMembers.first(where: { members[$0] != nil }) {
            return problem(secret, "is part of a private key: register the public key only, and keep the private key with the client")
        }
        guard let kid = members["kid"]?.string, (1...128).contains(kid.unicodeScalars.count),
            kid.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
        else { return problem("kid", "must be a key id of 1 to 128 printable ASCII characters (the client's assertions name it)") }
        if let use = members["use"]?.string, use != "sig" { return problem("use", "must be \"sig\": the key signs assertions") }
        let algorithm: Algorithm
        switch members["kty"]?.string {
        case "RSA"?:
            algorithm = .rs384
            guard let modulus = members["n"]?.string.flatMap(Base64URL.decode), let exponent = members["e"]?.string.flatMap(Base64URL.decode),
                !exponent.isEmpty, exponent.count <= 8
            else { return problem("n", "an RSA key needs its modulus n and exponent e, base64url-encoded") }
            let bits = (modulus.drop { $0 == 0 }.count) * 8
            guard (2048...8192).contains(bits) else { return problem("n", "an RSA key must have 2048 to 8192 bits (this one has \(bits))") }
        case "EC"?:
            algorithm = .es384
            guard members["crv"]?.string == "P-384" else { return problem("crv", "an EC key must be on the curve P-384 (for ES384)") }
            guard let x = members["x"]?.string.flatMap(Base64URL.decode), let y = members["y"]?.string.flatMap(Base64URL.decode),
                x.count == 48, y.count == 48
            else { return problem("x", "a P-384 key needs its coordinates x and y, 48 bytes each, base64url-encoded") }
        default:
            return problem("kty", "must be \"RSA\" (for RS384) or \"EC\" (for ES384)")
        }
        if let alg = members["alg"]?.string, alg != algorithm.rawValue {
            return problem("alg", "must be \(algorithm.rawValue) for this key (SMART Backend Services signs with RS384 or ES384)")
        }
        members["alg"] = .string(algorithm.rawValue)
        return .success(Key(kid: kid, algorithm: algorithm, jwk: .object(members)))
    }

    /// The kept set, as JSON (each key with its `alg`).
    package static func jwks(_ keys: [Key]) -> JSONValue {
        .object(["keys": .array(keys.map(\.jwk))])
    }
}

/// Problems as one error value (for `Result`).
package struct ProblemList: Error, Sendable, Equatable {
    package var problems: [ValidationProblem]
    package init(_ problems: [ValidationProblem]) { self.problems = problems }
}
