import Foundation

/// The example study document (`docs/examples/complete-study.json`) under another study id.
struct ExampleStudy: Sendable {
    func document(studyId: String) throws -> String {
        let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
        var object = try JSONSerialization.jsonObject(with: Data(example.utf8)) as! [String: Any]
        object["studyId"] = studyId
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}
