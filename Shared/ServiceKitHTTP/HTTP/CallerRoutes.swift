import Hummingbird

/// The routes of one API family whose every call names its caller the same way: a participant's
/// session, an app's credential. `identify` reads the request and answers the caller, or throws
/// the family's refusal, before any handler runs, and the handler is given the caller; so no
/// handler of the family can forget to authenticate, and none does it in its own words. (The
/// admin API's `AdminRouter` does the same, with each endpoint's access from its definition.)
public struct CallerRoutes<Caller: Sendable> {
    public let routes: any RouterMethods<ServiceRequestContext>
    private let identify: @Sendable (Request, ServiceRequestContext) async throws -> Caller

    public init(
        _ routes: any RouterMethods<ServiceRequestContext>,
        identify: @escaping @Sendable (Request, ServiceRequestContext) async throws -> Caller
    ) {
        self.routes = routes
        self.identify = identify
    }

    /// `handler` for `method` at `path`, given the caller `identify` found.
    @discardableResult
    public func on<Output: ResponseGenerator>(
        _ path: RouterPath, method: HTTPRequest.Method,
        use handler: @escaping @Sendable (Request, ServiceRequestContext, Caller) async throws -> Output
    ) -> Self {
        let identify = self.identify
        routes.on(path, method: method) { request, context in
            let caller = try await identify(request, context)
            return try await handler(request, context, caller)
        }
        return self
    }

    @discardableResult
    public func get<Output: ResponseGenerator>(
        _ path: RouterPath, use handler: @escaping @Sendable (Request, ServiceRequestContext, Caller) async throws -> Output
    ) -> Self {
        on(path, method: .get, use: handler)
    }

    @discardableResult
    public func post<Output: ResponseGenerator>(
        _ path: RouterPath, use handler: @escaping @Sendable (Request, ServiceRequestContext, Caller) async throws -> Output
    ) -> Self {
        on(path, method: .post, use: handler)
    }

    @discardableResult
    public func delete<Output: ResponseGenerator>(
        _ path: RouterPath, use handler: @escaping @Sendable (Request, ServiceRequestContext, Caller) async throws -> Output
    ) -> Self {
        on(path, method: .delete, use: handler)
    }
}
