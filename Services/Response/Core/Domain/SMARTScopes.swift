/// SMART's system scopes, as a backend service asks for them in its token request: v1
/// (`system/Patient.read`, `system/*.read`) and v2 (`system/Patient.rs`, `system/*.rs`, with a
/// resource type or `*` and the letters of `cruds` in that order). StudyStack's FHIR API only
/// reads, so what is granted is each scope's reading part (`read`, or the `r` and `s` of v2);
/// a scope that grants nothing readable is left out, and a request left with nothing is refused.
package enum SMARTScopes {
    /// The resource types the FHIR API serves, which a scope may name.
    package static let resourceTypes: Set<String> = [
        "ResearchStudy", "ResearchSubject", "Patient", "Questionnaire", "QuestionnaireResponse", "Observation", "Consent", "Binary", "Group",
    ]
    package static let maxLength = 2_000

    /// What a token may read: each resource type, with whether it may be read and searched.
    package struct Grant: Sendable, Equatable {
        /// The scopes granted, as the token reply says them.
        package var scopes: [String]

        /// Whether the grant lets the holder read (`read` or `r`) resources of `type`.
        package func mayRead(_ type: String) -> Bool { allows(type, letter: "r") }
        /// Whether the grant lets the holder search (`read` or `s`) resources of `type`.
        package func maySearch(_ type: String) -> Bool { allows(type, letter: "s") }

        private func allows(_ type: String, letter: Character) -> Bool {
            scopes.contains { scope in
                guard let (target, permissions) = SMARTScopes.parse(scope), target == "*" || target == type else { return false }
                return permissions == "read" || permissions.contains(letter)
            }
        }

        package var text: String { scopes.joined(separator: " ") }
    }

    /// The grant for a requested `scope` parameter, nil when nothing readable was asked for.
    package static func grant(requested: String) -> Grant? {
        guard requested.utf8.count <= maxLength else { return nil }
        var granted: [String] = []
        for scope in requested.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
            guard let (target, permissions) = parse(scope) else { continue }
            let reading: String
            if permissions == "read" {
                reading = "read"
            } else if permissions != "write" {
                reading = String(permissions.filter { $0 == "r" || $0 == "s" })
                guard !reading.isEmpty else { continue }
            } else {
                continue
            }
            let kept = "system/\(target).\(reading)"
            if !granted.contains(kept) { granted.append(kept) }
        }
        return granted.isEmpty ? nil : Grant(scopes: granted)
    }

    /// `(resource type or *, permissions)` of a well-formed system scope.
    static func parse(_ scope: String) -> (String, String)? {
        guard scope.hasPrefix("system/"), let dot = scope.lastIndex(of: ".") else { return nil }
        let target = String(scope[scope.index(scope.startIndex, offsetBy: 7)..<dot])
        let permissions = String(scope[scope.index(after: dot)...])
        guard target == "*" || resourceTypes.contains(target) else { return nil }
        if permissions == "read" || permissions == "write" || permissions == "*" { return (target, permissions == "*" ? "read" : permissions) }
        // v2: a non-empty subsequence of c r u d s, in that order.
        var rest = Substring("cruds")
        for letter in permissions {
            guard let found = rest.firstIndex(of: letter) else { return nil }
            rest = rest[rest.index(after: found)...]
        }
        return permissions.isEmpty ? nil : (target, permissions)
    }
}
