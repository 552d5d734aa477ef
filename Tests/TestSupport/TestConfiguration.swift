import Configuration
import Foundation
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// Keys and settings for services under test.
public enum TestConfiguration {
    /// One signing key per service, fixed for the test process.
    public static let keys: [ServiceName: String] = Dictionary(
        uniqueKeysWithValues: ServiceName.allCases.map { ($0, InternalKeys.generateKey()) })

    /// `INTERNAL_CALLER_KEYS` for `receiver` accepting all three services (their pair keys for
    /// it), so tests can also check that a route refuses a caller it does not serve.
    public static func callerKeys(for receiver: ServiceName) -> String {
        ServiceName.allCases.map {
            "\($0.rawValue)=\(InternalKeys.callerEntry(callerKey: keys[$0]!, caller: $0, receiver: receiver)!)"
        }.joined(separator: ",")
    }

    /// The key `caller` signs its calls to `receiver` with.
    public static func pairKey(_ caller: ServiceName, to receiver: ServiceName) -> String {
        InternalKeys.callerEntry(callerKey: keys[caller]!, caller: caller, receiver: receiver)!
    }

    /// The services' key for secrets at rest, fixed for the test process.
    public static let encryptionKey = InternalKeys.generateKey()

    /// An address where nothing listens.
    public static let unreachablePeer = "http://127.0.0.1:9"

    /// A reader with the settings a service needs against `databaseURL`; `overrides` win.
    public static func reader(
        for service: ServiceName, databaseURL: String, overrides: [String: String] = [:]
    ) -> ConfigReader {
        var values: [AbsoluteConfigKey: ConfigValue] = [
            AbsoluteConfigKey(ConfigKey("database.url")): .init(.string(databaseURL), isSecret: true),
            AbsoluteConfigKey(ConfigKey("http.port")): .init(.string("0"), isSecret: false),
            AbsoluteConfigKey(ConfigKey("internal.signingKey")): .init(.string(keys[service]!), isSecret: true),
            AbsoluteConfigKey(ConfigKey("internal.callerKeys")): .init(.string(callerKeys(for: service)), isSecret: true),
            AbsoluteConfigKey(ConfigKey("database.maxConnections")): .init(.string("5"), isSecret: false),
        ]
        values[AbsoluteConfigKey(ConfigKey("studystack.encryptionKey"))] = .init(.string(encryptionKey), isSecret: true)
        // Peers nobody listens on, unless a test says otherwise: outbox messages then wait in the
        // database for a test to inspect, and never reach services a developer has running.
        for peer in ["studyMetadata.url", "registration.url", "response.url"] {
            values[AbsoluteConfigKey(ConfigKey(peer))] = .init(.string(unreachablePeer), isSecret: false)
        }
        for (key, value) in overrides {
            values[AbsoluteConfigKey(ConfigKey(key))] = .init(.string(value), isSecret: false)
        }
        return ConfigReader(provider: InMemoryProvider(values: values))
    }
}
