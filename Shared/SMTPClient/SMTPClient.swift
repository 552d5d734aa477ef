import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// A small SMTP client (RFC 5321) on SwiftNIO: EHLO, STARTTLS (RFC 3207) or implicit TLS, AUTH
/// PLAIN or LOGIN, MAIL FROM, RCPT TO, DATA with dot-stuffing, QUIT. One connection per message:
/// transactional mail is not a bulk workload, and a fresh connection never inherits a broken state.
public struct SMTPClient: Sendable {
    public enum Security: String, Sendable, CaseIterable {
        /// Plain TCP, then STARTTLS before anything else; refuses servers that do not offer it.
        case startTLS = "starttls"
        /// TLS from the first byte (port 465).
        case tls
        /// No encryption. Only for a relay on the same host; credentials are never sent this way.
        case none
    }

    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var security: Security
        public var username: String?
        public var password: String?
        /// The name this client gives in EHLO.
        public var heloName: String
        /// PEM file of the certificate authorities to trust instead of the system's (a private CA).
        public var trustRootsFile: String?
        public var timeout: TimeAmount

        public init(
            host: String, port: Int, security: Security = .startTLS, username: String? = nil, password: String? = nil,
            heloName: String = "studystack.local", trustRootsFile: String? = nil, timeout: TimeAmount = .seconds(30)
        ) {
            self.host = host
            self.port = port
            self.security = security
            self.username = username
            self.password = password
            self.heloName = heloName
            self.trustRootsFile = trustRootsFile
            self.timeout = timeout
        }
    }

    /// A failure, with whether retrying can help (4xx, network) or not (5xx).
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var stage: String
        public var reply: String
        public var permanent: Bool
        public var description: String { "SMTP \(stage): \(reply)" }
    }

    public let configuration: Configuration
    let group: any EventLoopGroup

    public init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = group
    }

    /// Sends `message` (a complete RFC 5322 text with CRLF line ends) from `sender` to
    /// `recipients`; returns the server's final reply to DATA (usually carrying its queue id).
    public func send(from sender: String, to recipients: [String], message: String) async throws -> String {
        let timeout = configuration.timeout
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { try await self.converse(from: sender, to: recipients, message: message) }
            group.addTask {
                try await Task.sleep(for: .nanoseconds(timeout.nanoseconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let reply = try await group.next() ?? nil else {
                throw Failure(stage: "timeout", reply: "no answer within \(timeout.nanoseconds / 1_000_000_000) s", permanent: false)
            }
            return reply
        }
    }

    private func converse(from sender: String, to recipients: [String], message: String) async throws -> String {
        let tls = try makeTLSContext()
        let (lines, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
        let implicitTLS = configuration.security == .tls
        let host = configuration.host
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(configuration.timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if implicitTLS, let tls {
                            try channel.pipeline.syncOperations.addHandler(
                                try NIOSSLClientHandler(context: tls, serverHostname: host))
                        }
                        try channel.pipeline.syncOperations.addHandler(SMTPLineHandler(continuation: continuation))
                    }
                }
                .connect(host: configuration.host, port: configuration.port).get()
        } catch {
            throw Failure(stage: "connect", reply: String(describing: error), permanent: false)
        }
        var session = Session(channel: channel, lines: lines.makeAsyncIterator())
        do {
            let reply = try await run(&session, tls: tls, from: sender, to: recipients, message: message)
            _ = try? await session.command("QUIT", stage: "quit")
            try? await channel.close()
            return reply
        } catch {
            try? await channel.close()
            throw error
        }
    }

    private func run(
        _ session: inout Session, tls: NIOSSLContext?, from sender: String, to recipients: [String], message: String
    ) async throws -> String {
        try await session.expect(220, stage: "greeting")
        var capabilities = try await session.command("EHLO \(configuration.heloName)", expect: 250, stage: "EHLO").lines
        if configuration.security == .startTLS, let tls {
            guard capabilities.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                throw Failure(stage: "STARTTLS", reply: "the server does not offer STARTTLS", permanent: false)
            }
            try await session.command("STARTTLS", expect: 220, stage: "STARTTLS")
            let channel = session.channel
            let host = configuration.host
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(
                    try NIOSSLClientHandler(context: tls, serverHostname: host), position: .first)
            }.get()
            capabilities = try await session.command("EHLO \(configuration.heloName)", expect: 250, stage: "EHLO").lines
        }
        if let username = configuration.username, let password = configuration.password {
            guard configuration.security != .none else {
                throw Failure(stage: "AUTH", reply: "credentials are only sent over TLS", permanent: true)
            }
            let mechanisms = capabilities.first { $0.uppercased().hasPrefix("AUTH") }?.uppercased()
                .split(separator: " ").dropFirst().map(String.init) ?? []
            if mechanisms.contains("PLAIN") {
                let token = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
                try await session.command("AUTH PLAIN \(token)", expect: 235, stage: "AUTH")
            } else if mechanisms.contains("LOGIN") {
                try await session.command("AUTH LOGIN", expect: 334, stage: "AUTH")
                try await session.command(Data(username.utf8).base64EncodedString(), expect: 334, stage: "AUTH")
                try await session.command(Data(password.utf8).base64EncodedString(), expect: 235, stage: "AUTH")
            } else {
                throw Failure(stage: "AUTH", reply: "the server offers neither AUTH PLAIN nor LOGIN", permanent: true)
            }
        }
        try await session.command("MAIL FROM:<\(Self.address(in: sender))>", expect: 250, stage: "MAIL FROM")
        for recipient in recipients {
            let reply = try await session.command("RCPT TO:<\(Self.address(in: recipient))>", stage: "RCPT TO")
            guard reply.code == 250 || reply.code == 251 else { throw Self.failure("RCPT TO", reply) }
        }
        try await session.command("DATA", expect: 354, stage: "DATA")
        return try await session.command(Self.dotStuffed(message) + ".", expect: 250, stage: "message").text
    }

    private func makeTLSContext() throws -> NIOSSLContext? {
        guard configuration.security != .none else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let roots = configuration.trustRootsFile { tls.trustRoots = .file(roots) }
        return try NIOSSLContext(configuration: tls)
    }

    /// `Name <user@host>` → `user@host`.
    static func address(in mailbox: String) -> String {
        if let open = mailbox.lastIndex(of: "<"), let close = mailbox.lastIndex(of: ">"), open < close {
            return String(mailbox[mailbox.index(after: open)..<close])
        }
        return mailbox.trimmingCharacters(in: .whitespaces)
    }

    /// Lines starting with a dot get another (RFC 5321 4.5.2); the text ends with CRLF.
    static func dotStuffed(_ message: String) -> String {
        var lines = message.components(separatedBy: "\r\n")
        if lines.last == "" { lines.removeLast() }
        return lines.map { $0.utf8.first == UInt8(ascii: ".") ? "." + $0 : $0 }.joined(separator: "\r\n") + "\r\n"
    }

    static func failure(_ stage: String, _ reply: Reply) -> Failure {
        Failure(stage: stage, reply: reply.text, permanent: reply.code >= 500)
    }

    struct Reply: Sendable {
        var code: Int
        var lines: [String]
        var text: String { "\(code) " + lines.joined(separator: " ") }
    }

    struct Session {
        let channel: any Channel
        var lines: AsyncThrowingStream<String, any Error>.AsyncIterator

        /// Reads one reply: `250-first`, `250-second`, `250 last`.
        mutating func read(stage: String) async throws -> Reply {
            var texts: [String] = []
            while true {
                guard let line = try await lines.next() else {
                    throw Failure(stage: stage, reply: "the server closed the connection", permanent: false)
                }
                guard line.count >= 3, let code = Int(line.prefix(3)) else {
                    throw Failure(stage: stage, reply: "unreadable reply", permanent: false)
                }
                texts.append(String(line.dropFirst(4)))
                if line.count == 3 || line[line.index(line.startIndex, offsetBy: 3)] == " " {
                    return Reply(code: code, lines: texts)
                }
            }
        }

        mutating func expect(_ code: Int, stage: String) async throws {
            let reply = try await read(stage: stage)
            guard reply.code == code else { throw SMTPClient.failure(stage, reply) }
        }

        @discardableResult
        mutating func command(_ text: String, stage: String) async throws -> Reply {
            do {
                try await channel.writeAndFlush(ByteBuffer(string: text + "\r\n")).get()
            } catch {
                // The connection failed (a TLS handshake refused, say): its reason reached the
                // line stream, so reading reports it; otherwise report the write's error.
                _ = try await read(stage: stage)
                throw Failure(stage: stage, reply: String(describing: error), permanent: false)
            }
            return try await read(stage: stage)
        }

        @discardableResult
        mutating func command(_ text: String, expect code: Int, stage: String) async throws -> Reply {
            let reply = try await command(text, stage: stage)
            guard reply.code == code else { throw SMTPClient.failure(stage, reply) }
            return reply
        }
    }
}

/// Splits the server's bytes into CRLF-terminated lines for the session.
final class SMTPLineHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let continuation: AsyncThrowingStream<String, any Error>.Continuation
    private var pending = ByteBuffer()

    init(continuation: AsyncThrowingStream<String, any Error>.Continuation) {
        self.continuation = continuation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        pending.writeBuffer(&incoming)
        while let newline = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - pending.readerIndex + 1
            guard var line = pending.readString(length: length) else { break }
            while line.last == "\n" || line.last == "\r" { line.removeLast() }
            continuation.yield(line)
        }
        // A server that never ends a line must not grow this buffer without bound.
        if pending.readableBytes > 64 * 1024 {
            continuation.finish(throwing: SMTPClient.Failure(stage: "read", reply: "reply line too long", permanent: false))
            context.close(promise: nil)
        }
        pending.discardReadBytes()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        continuation.finish(throwing: SMTPClient.Failure(stage: "connection", reply: String(describing: error), permanent: false))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }
}
