import ServiceKit
import StudyModels

/// A super-admin's apps: each definition checked before it is stored, and refused with a
/// `StudyMetadataError`.
package struct AppAdministration: Sendable {
    package let apps: any AppRegistry

    package init(apps: any AppRegistry) {
        self.apps = apps
    }

    /// Creates `app`; answers each platform's credential, shown this once and stored hashed.
    package func create(_ app: AppDefinition, by actor: String) async throws -> AppCreated {
        let problems = app.problems()
        guard problems.isEmpty else { throw StudyMetadataError.invalid(problems, subject: .app) }
        switch try await apps.create(app, by: actor) {
        case .created(let issued):
            return AppCreated(
                app: app, credentials: Dictionary(uniqueKeysWithValues: issued.map { ($0.platform.rawValue, $0.basic) }))
        case .idTaken: throw StudyMetadataError.appIdTaken(app.appId)
        case .orgSpelledOtherwise(let existing): throw StudyMetadataError.orgSpelledOtherwise(orgId: app.orgId, existing: existing)
        }
    }

    /// New credentials for the app's test builds (the earlier ones stop working), shown once.
    package func issueTestingCredentials(appId: String, by actor: String) async throws -> TestingCredentials {
        guard let issued = try await apps.issueTestingCredentials(appId: appId, by: actor) else {
            throw StudyMetadataError.noApp(appId)
        }
        return TestingCredentials(
            appId: appId, credentials: Dictionary(uniqueKeysWithValues: issued.map { ($0.platform.rawValue, $0.basic) }))
    }

    /// Replaces the definition of the app `appId`; an app's id never changes.
    package func update(_ app: AppDefinition, appId: String, by actor: String) async throws {
        var problems = app.problems()
        if app.appId != appId {
            problems.append(ValidationProblem(pointer: "/appId", message: "must be \(appId), the app in the path; an app id never changes"))
        }
        guard problems.isEmpty else { throw StudyMetadataError.invalid(problems, subject: .app) }
        switch try await apps.update(app, by: actor) {
        case .updated: return
        case .notFound: throw StudyMetadataError.noApp(appId)
        case .orgSpelledOtherwise(let existing): throw StudyMetadataError.orgSpelledOtherwise(orgId: app.orgId, existing: existing)
        }
    }
}
