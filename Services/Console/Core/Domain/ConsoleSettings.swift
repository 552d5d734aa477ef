import Configuration
import Crypto
import Foundation
import Logging
import ServiceKit

/// What the console reads from its configuration. It has no database: it reaches the services'
/// admin APIs at their URLs, with the signed-in admin's token.
package struct ConsoleSettings: ProcessSettings {
    package enum Keys {
        package static let host = Setting("http.host")
        package static let port = Setting("http.port")
        package static let consoleKey = Setting("console.key", secret: true)
        package static let publicURL = Setting("console.publicUrl")
        package static let sessionHours = Setting("console.sessionHours")
        package static let studyMetadataURL = Setting("studyMetadata.url")
        package static let registrationURL = Setting("registration.url")
        package static let responseURL = Setting("response.url")
        package static let maxBodySize = Setting("http.maxBodySize")
        package static let templateCheck = Setting("console.templateCheck")
    }

    /// What a page does whose template asks for a name the page does not have: `log` it as an
    /// error and draw the page without it, or `fail` the page (500, the names in the body), which
    /// the tests run with so that a typo fails the test that draws the page.
    package enum TemplateCheck: String, CaseIterable, Sendable {
        case log
        case fail
    }

    package var host: String
    package var port: Int
    /// 32 random bytes (`CONSOLE_KEY`, base64): the session cookies are sealed under it, so every
    /// replica must have the same one.
    package var consoleKey: SymmetricKey
    /// Where admins open the console; `https` there makes the session cookie `Secure`.
    package var publicURL: URL
    /// How long a sign-in lasts, at most (study-metadata's token may end sooner).
    package var sessionDuration: Duration
    package var studyMetadataURL: URL
    package var registrationURL: URL
    package var responseURL: URL
    /// The largest request body the console reads (a whole study document uploaded as JSON).
    package var maxBodySize: Int
    package var templateCheck: TemplateCheck
    package var logLevel: ServiceSettings.LogLevel
    package var logFormat: ServiceSettings.LogFormat

    package var secureCookies: Bool { publicURL.scheme == "https" }

    package var startMetadata: Logger.Metadata { ["studyMetadata": "\(studyMetadataURL)", "publicUrl": "\(publicURL)"] }

    package init(reader: ConfigReader) throws(ConfigurationError) {
        let settings = SettingsReader(reader)
        host = settings.text(Keys.host) ?? "127.0.0.1"
        port = try settings.integer(Keys.port, default: 8080, in: 0...65_535)
        let keyText = try settings.requiredText(Keys.consoleKey)
        guard let key = Data(base64Encoded: keyText), key.count == 32 else {
            throw ConfigurationError(Keys.consoleKey, "must be 32 bytes in base64 (openssl rand -base64 32)")
        }
        consoleKey = SymmetricKey(data: key)
        publicURL = try settings.httpURL(Keys.publicURL, default: URL(string: "http://127.0.0.1:\(port)")!)
        sessionDuration = .seconds(3600 * (try settings.integer(Keys.sessionHours, default: 12, in: 1...168)))
        studyMetadataURL = try settings.httpURL(Keys.studyMetadataURL, default: URL(string: "http://127.0.0.1:8081")!)
        registrationURL = try settings.httpURL(Keys.registrationURL, default: URL(string: "http://127.0.0.1:8082")!)
        responseURL = try settings.httpURL(Keys.responseURL, default: URL(string: "http://127.0.0.1:8083")!)
        maxBodySize = try settings.integer(Keys.maxBodySize, default: 8 * 1024 * 1024, in: 1024...(1 << 30))
        templateCheck = try settings.choice(Keys.templateCheck, default: .log)
        logLevel = try settings.choice(ServiceSettings.Keys.logLevel, default: .info)
        logFormat = try settings.choice(ServiceSettings.Keys.logFormat, default: .text)
    }
}
