// swift-tools-version: 6.2
import PackageDescription

/// Settings every StudyStack target shares: Swift 6 language mode (strict concurrency) and
/// explicit `any` for existentials.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "StudyStack",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "study-metadata", targets: ["study-metadata"]),
        .executable(name: "registration", targets: ["registration"]),
        .executable(name: "response", targets: ["response"]),
        .executable(name: "console", targets: ["console"]),
        .executable(name: "studystack", targets: ["studystack"]),
        .executable(name: "studystack-import", targets: ["studystack-import"]),
        .library(name: "StudyModels", targets: ["StudyModels"]),
        .library(name: "JSONText", targets: ["JSONText"]),
        .library(name: "JSONSchema", targets: ["JSONSchema"]),
        .library(name: "ZipArchive", targets: ["ZipArchive"]),
        .library(name: "ServiceKit", targets: ["ServiceKit"]),
        .library(name: "ServiceKitHTTP", targets: ["ServiceKitHTTP"]),
        .library(name: "SMTPClient", targets: ["SMTPClient"]),
        .library(name: "QRCode", targets: ["QRCode"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(
            url: "https://github.com/apple/swift-configuration.git",
            from: "1.4.0",
            traits: [.defaults, "CommandLineArguments"]
        ),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // MARK: Shared libraries

        // A JSON value and its fast text reading and writing: what the study models are built of,
        // and what the legacy request envelopes carry.
        .target(
            name: "JSONText",
            path: "Shared/JSONText",
            swiftSettings: strictSettings
        ),
        // A draft-07 JSON Schema validator (Sage's assessment files are described by draft-07
        // schemas, and no maintained Swift package validates them): compiled once, no I/O.
        .target(
            name: "JSONSchema",
            dependencies: ["JSONText"],
            path: "Shared/JSONSchema",
            swiftSettings: strictSettings
        ),
        // Sage Bionetworks' AssessmentModel: its published schemas (shipped as resources, mended
        // when loaded), the checks of an assessment, and its mapping to the study model.
        .target(
            name: "SageAssessments",
            dependencies: ["JSONSchema", "JSONText", "StudyModels", "ZipArchive"],
            path: "Shared/SageAssessments",
            resources: [.copy("Schemas")],
            swiftSettings: strictSettings
        ),
        // FHIR R4 resources from the study model, its stored responses and enrollments: the
        // mapping only (no I/O), so it is tested without a cluster and read by docs/fhir.md.
        .target(
            name: "FHIR",
            dependencies: [
                "JSONText", "StudyModels",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Shared/FHIR",
            swiftSettings: strictSettings
        ),
        // zlib from the system (Debian's zlib1g-dev), for the tests' ZIP writer.
        .systemLibrary(
            name: "CZlib",
            path: "Shared/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // libdeflate from the system (Debian's libdeflate-dev): whole-buffer inflating and CRC-32
        // for ZIP entries, about twice as fast as zlib's streaming inflate on what phones send.
        .systemLibrary(
            name: "CLibDeflate",
            path: "Shared/CLibDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),
        // OpenSSL's libcrypto from the system (Debian's libssl-dev), for CMS EnvelopedData.
        .systemLibrary(
            name: "COpenSSL",
            path: "Shared/COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Sage's archives arrive sealed as CMS EnvelopedData for their study's certificate: the
        // study's key pair, and the envelope opened with libcrypto.
        .target(
            name: "CMSEnvelope",
            dependencies: [
                "COpenSSL",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Shared/CMSEnvelope",
            swiftSettings: strictSettings
        ),
        // ZIP archives from outside (Sage's result archives), read from memory with every offset
        // and limit checked.
        .target(
            name: "ZipArchive",
            dependencies: ["CLibDeflate"],
            path: "Shared/ZipArchive",
            swiftSettings: strictSettings
        ),
        .target(
            name: "StudyModels",
            dependencies: ["JSONText"],
            path: "Shared/StudyModels",
            swiftSettings: strictSettings
        ),
        // The service kit's core: database, queues, configuration, security, observability. It
        // has no HTTP server in it, so the services' cores can use it without Hummingbird.
        .target(
            name: "ServiceKit",
            dependencies: [
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),  // bcrypt only: no HTTP
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Shared/ServiceKit",
            swiftSettings: strictSettings
        ),
        // The HTTP side every service shares: the application and its middleware chain, the wire
        // error formats, request parsing, internal-call verification.
        .target(
            name: "ServiceKitHTTP",
            dependencies: [
                "ServiceKit", "JSONText",
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Shared/ServiceKitHTTP",
            swiftSettings: strictSettings
        ),
        // Every signed call between the services, defined once: the callers and the routers both
        // build from these definitions.
        .target(
            name: "InternalContracts",
            dependencies: ["ServiceKit", "StudyModels", "JSONText"],
            path: "Shared/InternalContracts",
            swiftSettings: strictSettings
        ),
        // Every admin API endpoint defined once (method, path, service, who may call it, body and
        // reply types): the console's client and each service's router are built from it.
        .target(
            name: "AdminContracts",
            dependencies: [
                "InternalContracts", "ServiceKit", "StudyModels",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Shared/AdminContracts",
            swiftSettings: strictSettings
        ),
        // The admin API's router, built from the definitions: it authenticates each request's
        // bearer token (study-metadata from its own sessions, the other services through its
        // internal API) and checks the endpoint's access before the handler runs.
        .target(
            name: "AdminAuthHTTP",
            dependencies: [
                "AdminContracts", "InternalContracts",
                "ServiceKit", "ServiceKitHTTP", "StudyModels", "JSONText",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Shared/AdminAuthHTTP",
            swiftSettings: strictSettings
        ),

        // MARK: Services (a library that tests import, and a thin executable)

        // Each service is three targets. Its core (domain rules, use cases, stores, jobs) has no
        // Hummingbird in its dependencies, so a store or rule that speaks HTTP does not compile;
        // its HTTP target (routes, request parsing, authentication, error mapping) sees the core;
        // its service target is the one assembly point that sees both.
        .target(
            name: "StudyMetadataCore",
            dependencies: [
                "InternalContracts",
                "ServiceKit", "StudyModels", "SageAssessments",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/StudyMetadata/Core",
            swiftSettings: strictSettings
        ),
        .target(
            name: "StudyMetadataHTTP",
            dependencies: [
                "AdminAuthHTTP", "AdminContracts", "InternalContracts",
                "StudyMetadataCore", "ServiceKit", "ServiceKitHTTP", "StudyModels", "JSONText",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Services/StudyMetadata/HTTP",
            swiftSettings: strictSettings
        ),
        .target(
            name: "StudyMetadataService",
            dependencies: [
                "AdminAuthHTTP", "StudyMetadataCore", "StudyMetadataHTTP", "ServiceKit", "ServiceKitHTTP", "StudyModels", "SageAssessments",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Services/StudyMetadata/Service",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "study-metadata",
            dependencies: ["StudyMetadataService", "ServiceKitHTTP"],
            path: "Services/StudyMetadata/Main",
            swiftSettings: strictSettings
        ),
        .target(
            name: "SMTPClient",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Shared/SMTPClient",
            swiftSettings: strictSettings
        ),
        // libqrencode from the system (Debian's libqrencode-dev), and QR codes drawn from it as SVG,
        // PNG and printable PDF sheets.
        .systemLibrary(
            name: "CQRencode",
            path: "Shared/CQRencode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .target(
            name: "PDFText",
            path: "Shared/PDFText",
            swiftSettings: strictSettings
        ),
        .target(
            name: "QRCode",
            dependencies: ["CQRencode", "PDFText"],
            path: "Shared/QRCode",
            swiftSettings: strictSettings
        ),
        .target(
            name: "RegistrationCore",
            dependencies: [
                "InternalContracts",
                "QRCode",
                "ServiceKit", "StudyModels", "SMTPClient", "JSONText",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/Registration/Core",
            swiftSettings: strictSettings
        ),
        .target(
            name: "RegistrationHTTP",
            dependencies: [
                "InternalContracts",
                "RegistrationCore", "AdminAuthHTTP", "AdminContracts", "ServiceKit", "ServiceKitHTTP", "StudyModels",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Services/Registration/HTTP",
            swiftSettings: strictSettings
        ),
        .target(
            name: "RegistrationService",
            dependencies: [
                "RegistrationCore", "RegistrationHTTP", "AdminAuthHTTP", "ServiceKit", "ServiceKitHTTP", "StudyModels", "SMTPClient",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/Registration/Service",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "registration",
            dependencies: ["RegistrationService", "ServiceKitHTTP"],
            path: "Services/Registration/Main",
            swiftSettings: strictSettings
        ),
        .target(
            name: "ResponseCore",
            dependencies: [
                "FHIR",
                "InternalContracts",
                "QRCode", "CMSEnvelope", "SageAssessments", "ZipArchive", "JSONText",
                "ServiceKit", "StudyModels",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Services/Response/Core",
            swiftSettings: strictSettings
        ),
        .target(
            name: "ResponseHTTP",
            dependencies: [
                "FHIR",
                "InternalContracts",
                "ResponseCore", "AdminAuthHTTP", "AdminContracts", "ServiceKit", "ServiceKitHTTP", "StudyModels", "SageAssessments", "ZipArchive",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Services/Response/HTTP",
            swiftSettings: strictSettings
        ),
        .target(
            name: "ResponseService",
            dependencies: [
                "FHIR",
                "ResponseCore", "ResponseHTTP", "AdminAuthHTTP", "ServiceKit", "ServiceKitHTTP", "StudyModels", "SageAssessments",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Services/Response/Service",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "response",
            dependencies: ["ResponseService", "ServiceKitHTTP"],
            path: "Services/Response/Main",
            swiftSettings: strictSettings
        ),

        // The researcher console: pages over the admin APIs, no database.
        .target(
            name: "ConsoleCore",
            dependencies: [
                "AdminContracts", "ServiceKit", "StudyModels", "JSONText", "PDFText",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Services/Console/Core",
            swiftSettings: strictSettings
        ),

        .target(
            name: "ConsoleHTTP",
            dependencies: [
                "AdminContracts", "ConsoleCore", "ServiceKit", "ServiceKitHTTP", "StudyModels", "JSONText", "QRCode",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Services/Console/HTTP",
            resources: [.copy("Resources/Templates"), .copy("Resources/Static")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ConsoleService",
            dependencies: [
                "ConsoleCore", "ConsoleHTTP", "ServiceKit", "ServiceKitHTTP",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Services/Console/Service",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "console",
            dependencies: ["ConsoleService"],
            path: "Services/Console/Main",
            swiftSettings: strictSettings
        ),
        // The four services in one executable, for the container image (one copy of the
        // statically linked runtime instead of four); it runs the service it is called as.
        .executableTarget(
            name: "studystack",
            dependencies: ["StudyMetadataService", "RegistrationService", "ResponseService", "ConsoleService", "ServiceKitHTTP"],
            path: "Services/StudyStack",
            swiftSettings: strictSettings
        ),

        // MARK: Tools

        // MariaDB Connector/C from the system (Debian's libmariadb-dev): a MyStudies 2.x
        // deployment's MySQL databases are read with it when its participants move in.
        .systemLibrary(
            name: "CMariaDB",
            path: "Shared/CMariaDB",
            pkgConfig: "libmariadb",
            providers: [.apt(["libmariadb-dev"])]
        ),

        // Reading a MyStudies deployment for moving it in (docs/moving-in.md): its study-metadata
        // API as the apps read it. Only reads; what it read goes to the services' admin APIs.
        .target(
            name: "MoveIn",
            dependencies: [
                "JSONText", "StudyModels", "CMariaDB", "ZipArchive",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tools/MoveIn",
            swiftSettings: strictSettings
        ),
        // `studystack-import`: the command a team moves a deployment in with.
        .executableTarget(
            name: "studystack-import",
            dependencies: [
                "MoveIn", "StudyModels", "JSONText",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tools/Import",
            swiftSettings: strictSettings
        ),

        // MARK: Tests

        // Every parser and validator outside bytes reach, for libFuzzer (`make fuzz`, built with
        // -sanitize=fuzzer) and to replay the committed corpora (`make test`). Not a service: the
        // image and deploy/ leave it out.
        .executableTarget(
            name: "studystack-fuzz",
            dependencies: [
                "StudyModels", "JSONText", "JSONSchema", "SageAssessments", "ZipArchive", "CMSEnvelope", "ServiceKit", "ServiceKitHTTP",
                "StudyMetadataCore", "RegistrationCore",
                "RegistrationHTTP", "ResponseCore", "ResponseHTTP", "ConsoleCore", "FHIR",
            ],
            path: "Tests/Fuzz",
            exclude: ["Corpus", "Regressions"],
            swiftSettings: strictSettings
        ),

        // make bench's JSON Schema figure: validations per second of one document (beside
        // Python's jsonschema, in scripts/bench_json_schema.py).
        .executableTarget(
            name: "json-schema-bench",
            dependencies: ["JSONSchema", "JSONText"],
            path: "Tests/Bench",
            swiftSettings: strictSettings
        ),
        // make bench's schedule figure: a year of runs for 100,000 participants (beside the same
        // expansion in PostgreSQL, bench/schedule-expansion.sql).
        .executableTarget(
            name: "schedule-bench",
            dependencies: ["StudyModels"],
            path: "Tests/ScheduleBench",
            swiftSettings: strictSettings
        ),

        .target(
            name: "TestSupport",
            dependencies: [
                "CZlib",
                "ServiceKit", "ServiceKitHTTP", "StudyModels", "ResponseService",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: strictSettings
        ),
        // In-memory conformers of the cores' ports: each use case's rules tested without a
        // database or a peer (the core test targets below; they need nothing from the machine).
        .target(
            name: "InMemoryPorts",
            dependencies: [
                "InternalContracts",
                "ResponseCore", "RegistrationCore", "StudyMetadataCore", "ConsoleCore", "ServiceKit", "StudyModels", "JSONText",
                "SageAssessments", "CMSEnvelope",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/InMemoryPorts",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResponseCoreTests",
            dependencies: [
                "ResponseCore", "InMemoryPorts", "TestSupport", "ServiceKit", "StudyModels", "SageAssessments", "JSONText",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ResponseCoreTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ConsoleCoreTests",
            dependencies: [
                "ConsoleCore", "InMemoryPorts", "StudyModels", "JSONText", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ConsoleCoreTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StudyMetadataCoreTests",
            dependencies: [
                "StudyMetadataCore", "InMemoryPorts", "ServiceKit", "StudyModels", "SageAssessments", "JSONText",
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            path: "Tests/StudyMetadataCoreTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "RegistrationCoreTests",
            dependencies: [
                "RegistrationCore", "InMemoryPorts", "ServiceKit", "StudyModels", "JSONText",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/RegistrationCoreTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "QRCodeTests",
            dependencies: ["QRCode", "TestSupport"],
            path: "Tests/QRCodeTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FHIRTests",
            dependencies: ["FHIR", "JSONText", "StudyModels", "TestSupport"],
            path: "Tests/FHIRTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "JSONSchemaTests",
            dependencies: ["JSONSchema", "JSONText"],
            path: "Tests/JSONSchemaTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ZipArchiveTests",
            dependencies: ["ZipArchive", "TestSupport"],
            path: "Tests/ZipArchiveTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SageAssessmentsTests",
            dependencies: ["SageAssessments", "CMSEnvelope", "JSONSchema", "JSONText", "StudyModels", "ZipArchive", "TestSupport"],
            path: "Tests/SageAssessmentsTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StudyModelsTests",
            dependencies: ["StudyModels", "JSONText", "TestSupport"],
            path: "Tests/StudyModelsTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ServiceKitTests",
            dependencies: [
                "AdminAuthHTTP", "AdminContracts", "ServiceKit", "ServiceKitHTTP", "TestSupport", "StudyModels", "JSONText",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/ServiceKitTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ServicesTests",
            dependencies: [
                "AdminContracts", "InternalContracts",
                "StudyMetadataCore", "StudyMetadataHTTP", "StudyMetadataService", "RegistrationCore", "RegistrationHTTP", "RegistrationService", "ResponseCore", "ResponseHTTP", "ResponseService", "TestSupport", "ServiceKit", "ServiceKitHTTP",
                "StudyModels", "MoveIn",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/ServicesTests",
            // The golden replies are read from the source tree (so a re-record lands there); as
            // resources they are declared, not left for the build to warn about.
            resources: [.copy("StudyMetadata/Golden")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ConsoleTests",
            dependencies: [
                "InternalContracts",
                "ConsoleCore", "ConsoleHTTP", "ConsoleService", "StudyMetadataService", "ResponseService", "RegistrationService",
                "RegistrationCore", "TestSupport", "StudyModels", "JSONText",
                "ServiceKit", "ServiceKitHTTP",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/ConsoleTests",
            swiftSettings: strictSettings
        ),
        // The three real executables (built by `swift build --build-tests`) driven as the apps do.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TestSupport", "ServiceKit", "ServiceKitHTTP", "StudyModels", "FHIR",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/EndToEndTests",
            swiftSettings: strictSettings
        ),
    ]
)
