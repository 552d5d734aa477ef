import Foundation
import ResponseCore
import TestSupport

/// The original LabKey server's survey designs (`Tests/Fixtures/labkey/SurveyMetadata`), read and
/// derived into schemas.
struct LabKeyDesigns: Sendable {
    static func design(_ name: String) throws -> Data {
        try Data(contentsOf: Conformance.labkey.appendingPathComponent("SurveyMetadata/\(name)"))
    }

    static func derive(_ name: String) throws -> SurveySchema {
        try SurveySchema.derive(fromDesign: try design(name))
    }
}
