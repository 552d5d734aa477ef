import Configuration
import ConsoleCore
import Foundation
import Testing

/// The console's configuration: what it needs, its defaults, and a clear refusal of bad values.
@Suite struct ConsoleSettingsTests {
    static let key = Data(repeating: 7, count: 32).base64EncodedString()

    func reader(_ values: [String: String]) -> ConfigReader {
        var provided: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in values { provided[AbsoluteConfigKey(ConfigKey(key))] = .init(.string(value), isSecret: false) }
        return ConfigReader(provider: InMemoryProvider(values: provided))
    }

    @Test func defaultsServeLocallyWithPlainCookies() throws {
        let settings = try ConsoleSettings(reader: reader(["console.key": Self.key]))
        #expect(settings.port == 8080)
        #expect(settings.host == "127.0.0.1")
        #expect(settings.publicURL.absoluteString == "http://127.0.0.1:8080")
        #expect(!settings.secureCookies)
        #expect(settings.sessionDuration == .seconds(12 * 3600))
        #expect(settings.studyMetadataURL.absoluteString == "http://127.0.0.1:8081")
        #expect(settings.responseURL.absoluteString == "http://127.0.0.1:8083")
    }

    @Test func anHTTPSAddressMakesTheCookieSecure() throws {
        let settings = try ConsoleSettings(
            reader: reader(["console.key": Self.key, "console.publicUrl": "https://console.example.org"]))
        #expect(settings.secureCookies)
    }

    @Test func badValuesAreRefusedByName() {
        let cases: [([String: String], String)] = [
            ([:], "CONSOLE_KEY"),
            (["console.key": "c2hvcnQ="], "CONSOLE_KEY"),
            (["console.key": Self.key, "console.publicUrl": "ftp://x"], "CONSOLE_PUBLIC_URL"),
            (["console.key": Self.key, "console.sessionHours": "0"], "CONSOLE_SESSION_HOURS"),
            (["console.key": Self.key, "studyMetadata.url": "not a url"], "STUDY_METADATA_URL"),
        ]
        for (values, named) in cases {
            #expect {
                _ = try ConsoleSettings(reader: reader(values))
            } throws: { error in
                "\(error)".contains(named)
            }
        }
    }
}
