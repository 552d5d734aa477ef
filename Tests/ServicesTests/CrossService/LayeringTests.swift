import Foundation
import Testing

/// The layers of docs/architecture.md ("Where code goes"), read from the sources. The build's
/// import check already refuses an undeclared import (a core target importing Hummingbird); what
/// it cannot see is an import a target reaches through another (PostgresNIO through the core),
/// so this checks what each layer imports.
@Suite struct LayeringTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let services = ["StudyMetadata", "Registration", "Response"]

    /// Every Swift file under `folder`, with its import lines.
    func imports(under folder: String) throws -> [(file: String, imports: [String])] {
        let base = Self.root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        var found: [(file: String, imports: [String])] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
            let imports = lines.filter { $0.hasPrefix("import ") || $0.hasPrefix("@testable import ") }
                .map { String($0.split(separator: " ").last ?? "") }
            found.append((url.path.replacingOccurrences(of: Self.root.path + "/", with: ""), imports))
        }
        return found
    }

    @Test(arguments: services) func theCoreHasNoHTTPServer(_ service: String) throws {
        let files = try imports(under: "Services/\(service)/Core")
        #expect(files.count >= 10, "the core of \(service) has \(files.count) files")
        for (file, imports) in files {
            #expect(imports.filter { ["Hummingbird", "HummingbirdCore", "HTTPTypes", "ServiceKitHTTP"].contains($0) } == [], "\(file)")
        }
    }

    @Test(arguments: services) func routesRunNoSQL(_ service: String) throws {
        let files = try imports(under: "Services/\(service)/HTTP")
        #expect(files.count >= 8, "the HTTP target of \(service) has \(files.count) files")
        for (file, imports) in files {
            #expect(!imports.contains("PostgresNIO"), "\(file) imports PostgresNIO: SQL belongs in a store, called by a use case")
        }
    }

    @Test func theSharedKitsCoreHasNoHTTPServerAndNoStudyModels() throws {
        let files = try imports(under: "Shared/ServiceKit")
        #expect(files.count >= 30)
        for (file, imports) in files {
            #expect(imports.filter { ["Hummingbird", "HummingbirdCore", "HTTPTypes", "StudyModels"].contains($0) } == [], "\(file)")
        }
    }
}
