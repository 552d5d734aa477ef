import AsyncHTTPClient
import Configuration
import ConsoleCore
import ConsoleHTTP
import Foundation
import Hummingbird
import Logging
import ServiceKit
import ServiceKitHTTP

/// Assembly point of the console: server-rendered pages over the services' admin APIs. It has
/// no database and keeps nothing in memory; the browser's sealed cookie is the whole session.
public enum ConsoleService {
    public static let name = "console"

    /// Builds the application from a configuration reader (what tests do).
    public static func buildApplication(
        reader: ConfigReader, logger: Logger, routeCatalog: RouteCatalog? = nil
    ) throws -> ServiceApplication {
        try buildApplication(settings: ConsoleSettings(reader: reader), logger: logger, routeCatalog: routeCatalog)
    }

    static func buildApplication(settings: ConsoleSettings, logger: Logger, routeCatalog: RouteCatalog? = nil) throws -> ServiceApplication {
        let http = ManagedHTTPClient {
            var configuration = HTTPClient.Configuration()
            // Each page makes a few admin API calls at once; many admins at once need more than
            // the default eight connections to study-metadata.
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
            configuration.timeout = .init(connect: .seconds(5), read: .seconds(30))
            return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }
        let api = AdminAPIClient(
            studyMetadata: settings.studyMetadataURL, registration: settings.registrationURL, response: settings.responseURL, http: http)
        let renderer = try PageRenderer(logger: logger, failOnUnknownNames: settings.templateCheck == .fail)
        let pages = ConsolePages(
            api: api, renderer: renderer,
            cookies: SessionCookies(
                sealer: SessionSealer(consoleKey: settings.consoleKey), secure: settings.secureCookies,
                duration: settings.sessionDuration),
            publicURL: settings.publicURL)
        let shell = HTTPShell(
            name: name, metrics: ServiceMetrics(), maxBodySize: settings.maxBodySize,
            errorFormat: { path in
                // /readyz and /metrics answer machines; everything else is a page.
                path == "/readyz" || path == "/metrics" || path == "/healthz" ? .admin : .page(pages.errorPage(for:))
            },
            readiness: {
                // Ready when study-metadata, where every page starts, is.
                do {
                    _ = try await api.send(.GET, "/readyz", token: nil, logger: logger)
                    return ReadinessReport(ready: true, service: name)
                } catch let error as AdminAPIError {
                    return ReadinessReport(ready: false, service: name, reason: "study-metadata: \(error.message)")
                } catch {
                    return ReadinessReport(ready: false, service: name, reason: "study-metadata: \(error)")
                }
            },
            responseHeaders: ConsoleHeaders.fields)
        try StaticFiles().add(to: shell.router)
        SignInRoutes(pages: pages).add(to: shell.router)
        StudyRoutes(pages: pages, sections: SectionSave(drafts: api), pdfText: PopplerPDFText()).add(to: shell.router)
        StudyActionRoutes(pages: pages).add(to: shell.router)
        TeamRoutes(pages: pages).add(to: shell.router)
        TokenRoutes(pages: pages).add(to: shell.router)
        MessageRoutes(pages: pages).add(to: shell.router)
        ManualChecklistRoutes(pages: pages).add(to: shell.router)
        FileRoutes(pages: pages).add(to: shell.router)
        ParticipantPageRoutes(pages: pages, records: ParticipantRecord(records: api)).add(to: shell.router)
        ConsentPreviewRoutes(pages: pages).add(to: shell.router)
        ResponseDataRoutes(pages: pages).add(to: shell.router)
        ProcessingRoutes(pages: pages).add(to: shell.router)
        FHIRClientRoutes(pages: pages).add(to: shell.router)
        ChartRoutes(pages: pages).add(to: shell.router)
        AdherenceRoutes(pages: pages).add(to: shell.router)
        APIKeyRoutes(pages: pages).add(to: shell.router)
        InvitationPageRoutes(pages: pages).add(to: shell.router)
        AdminAccountPageRoutes(pages: pages).add(to: shell.router)
        DocumentRoutes(pages: pages).add(to: shell.router)
        AppPageRoutes(pages: pages).add(to: shell.router)
        MoveInPageRoutes(pages: pages).add(to: shell.router)
        ActivityToolRoutes(pages: pages).add(to: shell.router)
        SchemaPageRoutes(pages: pages).add(to: shell.router)
        AnnouncementRoutes(pages: pages).add(to: shell.router)
        return shell.application(
            host: settings.host, port: settings.port, services: [http], logger: logger, routeCatalog: routeCatalog)
    }

    /// The executable's entry point.
    public static func main() async -> Never {
        await ServiceMain.run(name: name, settings: { reader throws(ConfigurationError) in try ConsoleSettings(reader: reader) }) {
            _, settings, logger in
            try buildApplication(settings: settings, logger: logger)
        }
    }
}
