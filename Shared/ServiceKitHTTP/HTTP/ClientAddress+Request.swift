import HTTPTypes
import Hummingbird
import ServiceKit

extension ClientAddressResolver {
    /// The address `request` comes from, by the same rule as `resolve(peer:forwardedFor:)`.
    public func resolve(_ request: Request, context: ServiceRequestContext) -> String {
        let forwarded = request.headers[values: .xForwardedFor]
        return resolve(peer: context.remoteAddress, forwardedFor: forwarded.isEmpty ? nil : forwarded.joined(separator: ","))
    }
}

extension HTTPField.Name {
    public static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
