import Hummingbird

extension Parameters {
    /// A path parameter as the client meant it. The router keeps a segment as it came,
    /// percent-encoded (`UX3%20sleep`), so an id looked up, named in a message or passed on to
    /// another service would carry the encoding; every route reads its parameters through this.
    /// A segment that is not valid percent-encoding (`100%`) is taken as it came.
    public func decoded(_ name: String) throws -> String {
        let raw = try require(name)
        return raw.removingPercentEncoding ?? raw
    }
}
