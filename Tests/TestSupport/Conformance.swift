import Foundation

/// Test data of the original MyStudies response server, kept in `Tests/Fixtures` (where it comes
/// from and under which licence: `Tests/Fixtures/PROVENANCE.md`).
public enum Conformance {
    /// `Tests/Fixtures`, found from this file's place in the repository.
    public static var root: URL {
        // Tests/TestSupport/Conformance.swift → Tests → Tests/Fixtures
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures")
    }

    /// The original LabKey response server's test data.
    public static var labkey: URL { root.appendingPathComponent("labkey") }

    /// The LabKey survey designs (not the responses beside them).
    public static var labKeySurveyDesigns: [URL] {
        let directory = root.appendingPathComponent("labkey/SurveyMetadata")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") && !$0.contains("--RESPONSE") }.sorted()
            .map { directory.appendingPathComponent($0) }
            + [root.appendingPathComponent("labkey/ParticipantPropertiesMetadata/Survey_Metadata.json")]
    }

    /// The one design the original test suite keeps malformed on purpose.
    public static let malformedDesign = "DYNAMICSCHEMASTUDY_NewSurvey_11.json"
}
