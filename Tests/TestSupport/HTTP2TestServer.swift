import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A TLS server that speaks only HTTP/2 (ALPN `h2`), as APNs does, for standing in for a third
/// party in tests. Each request is handed whole to an async handler; a client that cannot speak
/// HTTP/2 over TLS gets nothing.
public final class HTTP2TestServer: Sendable {
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        /// The first value of a header (names compare case-insensitively).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    public struct Reply: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]

        public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        public static func json(_ status: Int, _ object: Any, headers: [(String, String)] = []) -> Reply {
            let body = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
            return Reply(status: status, headers: [("content-type", "application/json")] + headers, body: Array(body))
        }
    }

    public typealias Handler = @Sendable (Request) async -> Reply

    let channel: any Channel
    public let port: Int

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    /// Listens on 127.0.0.1 (`port` 0 picks a free one).
    public static func start(certificates: TestCertificates, port: Int = 0, handler: @escaping Handler) async throws
        -> HTTP2TestServer
    {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificates.serverCertificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(certificates.serverKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                }.flatMap {
                    channel.configureHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(), StreamHandler(handler: handler),
                            ])
                        }
                    }.map { _ in }
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        return HTTP2TestServer(channel: channel, port: channel.localAddress?.port ?? port)
    }

    public var url: String { "https://127.0.0.1:\(port)" }

    public func stop() async throws {
        try await channel.close()
    }
}

/// Collects one request on an HTTP/2 stream and writes the handler's response.
private final class StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let handler: HTTP2TestServer.Handler
    var head: HTTPRequestHead?
    var body: [UInt8] = []

    init(handler: @escaping HTTP2TestServer.Handler) {
        self.handler = handler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch Self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            let request = HTTP2TestServer.Request(
                method: head.method.rawValue, path: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body)
            let handler = self.handler
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.makeFutureWithTask { await handler(request) }.whenSuccess { response in
                let context = bound.value
                var headers = HTTPHeaders(response.headers)
                headers.replaceOrAdd(name: "content-length", value: String(response.body.count))
                let status = HTTPResponseStatus(statusCode: response.status)
                context.write(Self.wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: status, headers: headers))), promise: nil)
                context.write(Self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
                context.writeAndFlush(Self.wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
