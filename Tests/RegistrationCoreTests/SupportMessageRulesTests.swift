import Foundation
import InMemoryPorts
import RegistrationCore
import Testing

/// `SupportMessages` (the apps' `feedback` and `contactUs`) against an in-memory mailbox: what is
/// sent, to which address, and that a message refused is not queued.
@Suite struct SupportMessageRulesTests {
    static func mailbox() -> InMemorySupportMailbox { InMemorySupportMailbox([("APP", .feedback), ("APP", .contact)]) }

    @Test func feedbackIsTrimmedAndQueuedToTheAppsFeedbackAddress() async throws {
        let mailbox = Self.mailbox()
        try await SupportMessages(mailbox: mailbox).sendFeedback(subject: "  Crash \n", body: "\nIt stops.  ", appId: "APP", orgId: "ORG")
        #expect(mailbox.queued.count == 1)
        #expect(mailbox.queued.first?.message == SupportMessage(kind: .feedback, subject: "Crash", body: "It stops.", replyTo: nil))
    }

    @Test func contactCarriesTheSendersNameAndAddressAndRepliesToThem() async throws {
        let mailbox = Self.mailbox()
        try await SupportMessages(mailbox: mailbox).sendContact(
            subject: "Help", body: "Where is my data?", email: "p@example.org", firstName: " Ana ", appId: "APP", orgId: "ORG")
        #expect(mailbox.queued.count == 1)
        let message = try #require(mailbox.queued.first?.message)
        #expect(message.kind == .contact)
        #expect(message.replyTo == "p@example.org")
        #expect(message.body == "From: Ana <p@example.org>\n\nWhere is my data?")
    }

    /// Each refusal is a clear error and queues nothing: lengths as sent (in scalars: 200 `e`
    /// with a combining accent are 400 scalars), an address that could inject headers, a name on
    /// two lines, and an app with no address for the kind.
    @Test func aRefusedMessageQueuesNothing() async throws {
        let mailbox = InMemorySupportMailbox([("APP", .feedback)])
        let messages = SupportMessages(mailbox: mailbox)
        let accented = String(repeating: "e\u{301}", count: 200)
        #expect(accented.count == 200)
        await #expect(throws: RegistrationError.self) {
            try await messages.sendFeedback(subject: accented, body: "x", appId: "APP", orgId: "ORG")
        }
        await #expect(throws: RegistrationError.self) {
            try await messages.sendFeedback(subject: "x", body: String(repeating: "a", count: 10_001), appId: "APP", orgId: "ORG")
        }
        await #expect(throws: RegistrationError.self) {
            try await messages.sendContact(
                subject: "x", body: "y", email: "p@example.org>\r\nBcc: all@example.org", firstName: nil, appId: "APP", orgId: "ORG")
        }
        await #expect(throws: RegistrationError.self) {
            try await messages.sendContact(subject: "x", body: "y", email: "p@example.org", firstName: "A\nB", appId: "APP", orgId: "ORG")
        }
        await #expect(throws: RegistrationError.self) {
            try await messages.sendContact(subject: "x", body: "y", email: "p@example.org", firstName: nil, appId: "APP", orgId: "ORG")
        }
        await #expect(throws: RegistrationError.self) {
            try await messages.sendFeedback(subject: "x", body: "y", appId: "OTHER", orgId: "ORG")
        }
        #expect(mailbox.queued.isEmpty)
        try await messages.sendFeedback(subject: String(repeating: "e", count: 200), body: "y", appId: "APP", orgId: "ORG")
        #expect(mailbox.queued.count == 1, "200 characters as sent are within the limit")
    }
}
