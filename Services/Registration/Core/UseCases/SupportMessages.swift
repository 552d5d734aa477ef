import Foundation
import ServiceKit
import StudyModels

/// `feedback` and `contactUs`: a participant's message, e-mailed to the address the app's
/// definition names. The apps send these without a session, so the text is limited in size,
/// escaped into the HTML (the original pasted it in raw), and the calls are rate-limited per
/// client address by the route. This decides what is sent; the `SupportMailbox` queues it.
package struct SupportMessages: Sendable {
    package static let maxSubject = 200
    package static let maxBody = 10_000
    package static let maxName = 100

    package let mailbox: any SupportMailbox

    package init(mailbox: any SupportMailbox) {
        self.mailbox = mailbox
    }

    /// `subject` and `body` as sent: the limits count what was sent, then the text is trimmed.
    package func sendFeedback(subject sentSubject: String, body sentBody: String, appId: String, orgId: String) async throws {
        let (subject, body) = try Self.checked(subject: sentSubject, body: sentBody)
        let message = SupportMessage(kind: .feedback, subject: subject, body: body, replyTo: nil)
        guard try await mailbox.queue(message, appId: appId, orgId: orgId) else {
            throw RegistrationError.invalid("Feedback is not set up for this app.")
        }
    }

    /// The reply goes to the participant: their address is the message's `Reply-To`.
    package func sendContact(
        subject sentSubject: String, body sentBody: String, email: String, firstName sentFirstName: String?,
        appId: String, orgId: String
    ) async throws {
        let (subject, body) = try Self.checked(subject: sentSubject, body: sentBody)
        guard EmailAddress.isPlausible(email), !email.contains(where: { "<>\",;".contains($0) }) else {
            throw RegistrationError.invalid("Please enter a valid email address.")
        }
        var firstName: String?
        if let sentFirstName, !sentFirstName.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            guard let name = TextRules.singleLineField(sentFirstName, maximum: Self.maxName) else {
                throw RegistrationError.invalid("The first name must be one line of up to \(Self.maxName) characters.")
            }
            firstName = name
        }
        let text = "From: \(firstName.map { "\($0) " } ?? "")<\(email)>\n\n\(body)"
        let message = SupportMessage(kind: .contact, subject: subject, body: text, replyTo: email)
        guard try await mailbox.queue(message, appId: appId, orgId: orgId) else {
            throw RegistrationError.invalid("Contact is not set up for this app.")
        }
    }

    /// The subject and body trimmed, once their lengths as sent are within the limits. Counted in
    /// Unicode scalars, as the OpenAPI document's `maxLength` counts: a letter with combining marks
    /// is one `Character` but several scalars.
    package static func checked(subject: String, body: String) throws -> (subject: String, body: String) {
        guard subject.unicodeScalars.count <= maxSubject else {
            throw RegistrationError.invalid("The subject must be at most \(maxSubject) characters.")
        }
        guard body.unicodeScalars.count <= maxBody else {
            throw RegistrationError.invalid("The message must be at most \(maxBody) characters.")
        }
        return (subject.trimmingCharacters(in: .whitespacesAndNewlines), body.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// A participant's message as it is to be sent: to the app's feedback address, or to its support
/// address with the participant's as `Reply-To`.
package struct SupportMessage: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        case feedback, contact
    }

    package var kind: Kind
    package var subject: String
    package var body: String
    package var replyTo: String?

    package init(kind: Kind, subject: String, body: String, replyTo: String?) {
        self.kind = kind
        self.subject = subject
        self.body = body
        self.replyTo = replyTo
    }
}
