import ServiceKitHTTP
import Testing

/// Which methods a path is served under, for the 405 answer: the most specific routes decide.
@Suite struct MethodNotAllowedTests {
    @Test func theMostSpecificRoutesOwnAPath() {
        let table = MethodNotAllowedMiddleware.RouteTable()
        table.record([
            ("POST", "/:call"), ("GET", "/:call"),
            ("GET", "/:call/:folder"), ("POST", "/:call/:folder"),
            ("POST", "/v3/uploads"), ("POST", "/v3/uploads/:uploadId/complete"),
            ("GET", "/healthz"), ("PUT", "/sage/v1/uploads/:uploadId"),
        ])
        let cases: [(String, [String])] = [
            ("/v3/uploads", ["POST"]),
            ("/v3/uploads/abc/complete", ["POST"]),
            ("/query/folder", ["GET", "POST"]),
            ("/healthz", ["GET"]),
            ("/mobileappstudy-enroll.api", ["POST", "GET"]),
            ("/sage/v1/uploads/abc", ["PUT"]),
            ("/a/b/c", []),
        ]
        #expect(cases.count == 7)
        for (path, methods) in cases { #expect(table.methods(matching: path) == methods, "\(path)") }
    }
}
