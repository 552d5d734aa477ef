import StudyModels

/// A source of a study's stored responses read a page at a time (`MyStudiesFirestoreReader`,
/// `MyStudiesFHIRStoreReader`): each handed to `body` as it is read; returns how many.
public protocol StoredResponseReader: Sendable {
    func read(studyId: String, _ body: (MyStudiesStoredResponse) throws -> Void) async throws -> Int
}

extension MyStudiesFirestoreReader: StoredResponseReader {}
extension MyStudiesFHIRStoreReader: StoredResponseReader {}
