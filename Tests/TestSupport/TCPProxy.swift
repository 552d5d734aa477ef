import NIOCore
import NIOPosix
import Synchronization

/// A loopback TCP relay between a service and PostgreSQL that a test can cut off and restore,
/// to make the database unreachable without stopping the shared test cluster.
public final class TCPProxy: Sendable {
    private struct State {
        var accepting = true
        var open: [any Channel] = []
    }

    private let state = Mutex(State())
    private let server: Mutex<(any Channel)?> = Mutex(nil)
    let upstreamHost: String
    let upstreamPort: Int

    private init(upstreamHost: String, upstreamPort: Int) {
        self.upstreamHost = upstreamHost
        self.upstreamPort = upstreamPort
    }

    /// The port the proxy listens on (127.0.0.1).
    public var port: Int { server.withLock { $0?.localAddress?.port ?? 0 } }

    public static func start(upstreamHost: String, upstreamPort: Int) async throws -> TCPProxy {
        let proxy = TCPProxy(upstreamHost: upstreamHost, upstreamPort: upstreamPort)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in proxy.connect(inbound) }
            .bind(host: "127.0.0.1", port: 0).get()
        proxy.server.withLock { $0 = channel }
        return proxy
    }

    /// Closes every relayed connection and refuses new ones until `restore()`.
    public func cutOff() async {
        let channels = state.withLock { state in
            state.accepting = false
            defer { state.open.removeAll() }
            return state.open
        }
        for channel in channels { try? await channel.close() }
    }

    /// Accepts and relays connections again.
    public func restore() {
        state.withLock { $0.accepting = true }
    }

    public func stop() async {
        await cutOff()
        if let channel = server.withLock({ $0 }) { try? await channel.close() }
    }

    private func connect(_ inbound: any Channel) -> EventLoopFuture<Void> {
        guard state.withLock({ $0.accepting }) else { return inbound.close() }
        return ClientBootstrap(group: inbound.eventLoop)
            .connect(host: upstreamHost, port: upstreamPort)
            .flatMap { upstream in
                self.state.withLock { $0.open.append(contentsOf: [inbound, upstream]) }
                return upstream.pipeline.addHandler(RelayHandler(partner: inbound))
                    .flatMap { inbound.pipeline.addHandler(RelayHandler(partner: upstream)) }
            }
    }
}

/// Copies bytes read on one channel to its partner, and closes the partner when either side closes.
private final class RelayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
