import Foundation
import JSONText
import StudyModels

/// Checks the console makes before it calls the admin API, where the API could not report every
/// problem at once.
package enum StudyChecks {
    /// A new study whose id cannot be a path segment of the admin API (empty, spaces, `/`) is
    /// refused here, with the id's problem and every problem the study model finds in the
    /// form's other fields; nil when the id is well formed, and the admin API decides the rest.
    package static func newStudyProblems(studyId: String, document: JSONValue, section: StudySection) -> [ValidationProblem]? {
        guard !Identifiers.isValid(studyId) else { return nil }
        let idProblem = ValidationProblem(
            pointer: "/studyId", message: studyId.isEmpty ? "enter the study's id" : "the study id \(Identifiers.rule)")
        // The rest of the form, checked as the admin API would, with a stand-in id.
        var stand = document
        guard (try? stand.set(.string("STANDIN"), at: JSONPointer(tokens: ["studyId"]))) != nil,
            let data = try? JSONEncoder().encode(stand)
        else { return [idProblem] }
        let study: StudyDocument
        do {
            study = try JSONDecoder().decode(StudyDocument.self, from: data)
        } catch let error as DecodingError {
            // A field left empty is missing from the document (the title, say), as the API would say.
            return [idProblem, JSONPointer.problem(for: error, document: "study document")]
        } catch {
            return [idProblem]
        }
        let others = StudyValidator.review(study).problems.filter { problem in
            problem.pointer != "/studyId"
                && JSONPointer(problem.pointer).flatMap { section.field(holding: $0, form: FormFields()) } != nil
        }
        return [idProblem] + others
    }
}
