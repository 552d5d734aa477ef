import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import RegistrationCore
import RegistrationHTTP
import RegistrationService
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// Each of the three services assembles from configuration, migrates its database, reports
/// ready, and guards its internal API.
@Suite struct ServiceAssemblyTests {

    static let services: [(ServiceName, Int, String)] = [
        (.studyMetadata, 8081, "studystack_metadata"),
        (.registration, 8082, "studystack_registration"),
        (.response, 8083, "studystack_response"),
    ]

    static func build(_ service: ServiceName, databaseURL: String) throws -> ServiceApplication {
        let reader = TestConfiguration.reader(for: service, databaseURL: databaseURL)
        let logger = Logger(label: service.rawValue)
        switch service {
        case .studyMetadata: return try StudyMetadataService.buildApplication(reader: reader, logger: logger)
        case .registration: return try RegistrationService.buildApplication(reader: reader, logger: logger)
        case .response: return try ResponseService.buildApplication(reader: reader, logger: logger)
        }
    }

    @Test func descriptorsCarryThePortsAndDatabases() {
        let descriptors = [StudyMetadataService.descriptor, RegistrationService.descriptor, ResponseService.descriptor]
        for (descriptor, (name, port, database)) in zip(descriptors, Self.services) {
            #expect(descriptor.name == name)
            #expect(descriptor.defaultPort == port)
            #expect(descriptor.defaultDatabase == database)
        }
    }

    @Test(.needsCluster, arguments: [ServiceName.studyMetadata, .registration, .response])
    func startsMigratesAndGuardsInternalRoutes(_ service: ServiceName) async throws {
        try await TestDatabase.withFreshDatabase { url in
            let app = try Self.build(service, databaseURL: url)
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                try await client.execute(uri: "/healthz", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body).contains(service.rawValue))
                }
                try await client.execute(uri: "/readyz", method: .get) { response in
                    let report = try response.body.decodeJSON(ReadinessReport.self)
                    #expect(report == ReadinessReport(ready: true, service: service.rawValue))
                }
                try await client.execute(uri: "/internal/v1/whoami", method: .get) { response in
                    #expect(response.status == .unauthorized)
                }
                for caller in ServiceName.allCases where caller != service {
                    let headers = TestApplication.signedHeaders(caller: caller, to: service, method: .get, path: "/internal/v1/whoami")
                    try await client.execute(uri: "/internal/v1/whoami", method: .get, headers: headers) { response in
                        #expect(response.status == .ok)
                        let who = try response.body.decodeJSON(WhoAmIResponse.self)
                        #expect(who == WhoAmIResponse(service: service.rawValue, caller: caller.rawValue))
                    }
                }
            }
        }
    }
}

