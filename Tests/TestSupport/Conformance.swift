import Foundation

/// The shared conformance data (`../shared/conformance` beside the repository), used as it is.
public enum Conformance {
    public static var root: URL {
        if let path = ProcessInfo.processInfo.environment["STUDYSTACK_CONFORMANCE_DIR"] {
            return URL(fileURLWithPath: path)
        }
        // Tests/TestSupport/Conformance.swift → repository → its parent → shared/conformance
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/conformance")
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
