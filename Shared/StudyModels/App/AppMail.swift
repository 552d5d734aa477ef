import Foundation

/// How the registration service writes to an app's participants: the sender, and the app's own
/// texts for each kind of message. Whatever is left out falls back to the service's built-in
/// sender and texts.
public struct AppMail: Codable, Sendable, Equatable {
    /// One message kind's subject and HTML body. In the verification and password texts,
    /// `<<< TOKEN HERE >>>` marks where the code or temporary password goes; in the feedback and
    /// contact texts it marks the participant's subject (in `subject`) and message (in `body`).
    /// Whatever replaces it is escaped for HTML.
    public struct Template: Codable, Sendable, Equatable {
        public var subject: String
        public var body: String

        public init(subject: String, body: String) {
            self.subject = subject
            self.body = body
        }
    }

    public static let tokenMarker = "<<< TOKEN HERE >>>"
    /// Largest template body accepted (a mail body, not a document store).
    public static let maxBodyCharacters = 100_000

    /// The `From:` address; the service's `mail.from` setting when nil.
    public var fromAddress: String?
    /// The display name shown with `fromAddress`.
    public var fromName: String?
    public var verification: Template?
    public var passwordHelp: Template?
    public var feedback: Template?
    public var contact: Template?

    public init(
        fromAddress: String? = nil, fromName: String? = nil, verification: Template? = nil,
        passwordHelp: Template? = nil, feedback: Template? = nil, contact: Template? = nil
    ) {
        self.fromAddress = fromAddress
        self.fromName = fromName
        self.verification = verification
        self.passwordHelp = passwordHelp
        self.feedback = feedback
        self.contact = contact
    }

    /// Every problem, located by JSON Pointer under `prefix`.
    func problems(at prefix: String) -> [ValidationProblem] {
        var found: [ValidationProblem] = []
        if let fromAddress, !EmailAddress.isPlausible(fromAddress) || fromAddress.contains(where: { "<>\",;".contains($0) }) {
            found.append(.init(pointer: "\(prefix)/fromAddress", message: "must be a plain e-mail address"))
        }
        if let fromName, fromName.isEmpty || fromName.count > 100
            || fromName.contains(where: { $0.isNewline || "<>\"\\".contains($0) })
        {
            found.append(.init(
                pointer: "\(prefix)/fromName", message: "must be one line of up to 100 characters without < > \" or \\"))
        }
        let templates: [(String, Template?, Bool)] = [
            ("verification", verification, true), ("passwordHelp", passwordHelp, true),
            ("feedback", feedback, false), ("contact", contact, false),
        ]
        for (name, template, needsToken) in templates {
            guard let template else { continue }
            let pointer = "\(prefix)/\(name)"
            if template.subject.trimmingCharacters(in: .whitespaces).isEmpty || template.subject.count > 200
                || template.subject.contains(where: \.isNewline)
            {
                found.append(.init(pointer: "\(pointer)/subject", message: "must be one line of 1 to 200 characters"))
            }
            if template.body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
                || template.body.count > Self.maxBodyCharacters
            {
                found.append(.init(
                    pointer: "\(pointer)/body", message: "must be 1 to \(Self.maxBodyCharacters) characters of HTML"))
            } else if needsToken, !template.body.contains(Self.tokenMarker) {
                found.append(.init(
                    pointer: "\(pointer)/body", message: "must contain \(Self.tokenMarker) where the code goes"))
            }
        }
        return found
    }
}

/// What study-metadata sends the registration service whenever an app is created or changed
/// (`PUT /internal/v1/apps/{appId}`). `revision` grows with every change, so a late or repeated
/// delivery never replaces a newer definition.
public struct AppSettingsSync: Codable, Sendable, Equatable {
    public var revision: Int64
    public var app: AppDefinition

    public init(revision: Int64, app: AppDefinition) {
        self.revision = revision
        self.app = app
    }
}
