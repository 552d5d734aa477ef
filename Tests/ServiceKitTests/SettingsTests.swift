import Configuration
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// Configuration: local defaults, and one clear error naming the setting for bad input.
@Suite struct SettingsTests {
    let descriptor = ServiceDescriptor(
        name: .registration, defaultPort: 8082, defaultDatabase: "studystack_registration", migrations: [])

    func settings(_ values: [String: String]) throws(ConfigurationError) -> ServiceSettings {
        var all: [AbsoluteConfigKey: ConfigValue] = [
            "internal.signingKey": .init(.string(InternalKeys.generateKey()), isSecret: true)
        ]
        for (key, value) in values { all[AbsoluteConfigKey(ConfigKey(key))] = .init(.string(value), isSecret: false) }
        return try ServiceSettings(reader: ConfigReader(provider: InMemoryProvider(values: all)), descriptor: descriptor)
    }

    func problem(_ values: [String: String]) -> String? {
        do {
            _ = try settings(values)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func localDefaultsNeedNoSetup() throws {
        let settings = try settings([:])
        #expect(settings.port == 8082)
        #expect(settings.host == "127.0.0.1")
        #expect(settings.database.database == "studystack_registration")
        #expect(settings.database.port == 55432)
        #expect(settings.database.tlsMode == .disable)
        #expect(settings.peers[.studyMetadata]?.absoluteString == "http://127.0.0.1:8081")
        #expect(settings.peers[.response]?.absoluteString == "http://127.0.0.1:8083")
        #expect(settings.logFormat == .text)
    }

    @Test func readsADatabaseURL() throws {
        let settings = try settings(["database.url": "postgresql://app:p%40ss@db.internal:6543/reg?sslmode=require"])
        #expect(settings.database.username == "app")
        #expect(settings.database.password == "p@ss")
        #expect(settings.database.host == "db.internal")
        #expect(settings.database.port == 6543)
        #expect(settings.database.tlsMode == .require)
        let socket = try self.settings(["database.url": "postgres://app@/reg?host=/var/run/postgresql"])
        #expect(socket.database.unixSocketDirectory == "/var/run/postgresql")
    }

    @Test func namesTheSettingThatIsWrong() {
        #expect(problem(["http.port": "eighty"]) == #"configuration error: HTTP_PORT (--http-port): must be a whole number from 0 to 65535, got "eighty""#)
        #expect(problem(["http.maxBodySize": "-1"])?.hasPrefix("configuration error: HTTP_MAX_BODY_SIZE (--http-max-body-size)") == true)
        #expect(problem(["database.url": "mysql://x/y"])?.hasPrefix("configuration error: DATABASE_URL (--database-url)") == true)
        #expect(problem(["database.url": "postgres://localhost/"])?.contains("names no user") == true)
        #expect(problem(["database.url": "postgres://u:secretpw@h/db?sslmode=maybe"])?.contains("sslmode") == true)
        #expect(problem(["database.url": "postgres://u:secretpw@h/db?sslmode=maybe"])?.contains("secretpw") == false)
        #expect(problem(["log.format": "xml"]) == #"configuration error: LOG_FORMAT (--log-format): must be one of text, json, got "xml""#)
        #expect(problem(["registration.url": "ftp://x"])?.hasPrefix("configuration error: REGISTRATION_URL") == true)
        #expect(problem(["internal.callerKeys": "registration"])?.hasPrefix("configuration error: INTERNAL_CALLER_KEYS") == true)
        #expect(problem(["internal.callerKeys": "registration=c2hvcnQ="])?.contains("at least 32 bytes") == true)
    }

    @Test func requiresASigningKey() {
        let reader = ConfigReader(provider: InMemoryProvider(values: [:]))
        #expect(throws: ConfigurationError.self) { try ServiceSettings(reader: reader, descriptor: descriptor) }
        do {
            _ = try ServiceSettings(reader: reader, descriptor: descriptor)
        } catch {
            #expect(error.description == "configuration error: INTERNAL_SIGNING_KEY (--internal-signing-key): is required but not set")
        }
    }

    @Test func acceptsSeveralKeysPerCallerForRotation() throws {
        let old = InternalKeys.generateKey()
        let new = InternalKeys.generateKey()
        let keys = try InternalKeys(
            ownName: .response, signingKey: new, callerKeys: "registration=\(old), registration=\(new),study-metadata=\(new)")
        #expect(keys.callerKeys["registration"]?.count == 2)
        #expect(keys.callerKeys["study-metadata"]?.count == 1)
    }

    @Test func settingNamesFollowSwiftConfiguration() {
        #expect(Setting("database.maxConnections").environmentName == "DATABASE_MAX_CONNECTIONS")
        #expect(Setting("database.maxConnections").flagName == "--database-max-connections")
        #expect(Setting("studyMetadata.url").environmentName == "STUDY_METADATA_URL")
    }
}
