import ConsoleCore
import Foundation
import Hummingbird
import JSONText
import ServiceKitHTTP
import StudyModels

/// Apps: the list, a new app (its iOS and Android credentials shown once), an app's definition,
/// and its push credentials. Super-admins change them; the admin API refuses anyone else.
package struct AppPageRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/apps", use: list)
        router.get("/apps/new", use: newForm)
        router.post("/apps/new", use: create)
        router.get("/apps/:appId", use: edit)
        router.post("/apps/:appId", use: save)
        router.post("/apps/:appId/testing-credentials", use: issueTestingCredentials)
        router.get("/apps/:appId/push", use: push)
        router.post("/apps/:appId/push/ios", use: uploadAPNs)
        router.post("/apps/:appId/push/android", use: uploadFCM)
        router.post("/apps/:appId/push/remove", use: removePush)
    }

    // MARK: The list and a new app

    @Sendable func list(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, _ in
            let apps = try await pages.api.apps(token: session.token, logger: context.logger)
            let rows = apps.map { app in
                AppsView.Row(
                    appId: app.appId, orgId: app.orgId, name: app.name.text(for: "en"), kind: app.kind.rawValue,
                    ios: app.ios?.latestVersion ?? "", android: app.android?.latestVersion ?? "")
            }
            return pages.render(AppsView(apps: rows, hasApps: !rows.isEmpty), title: "Apps", session: session)
        }
    }

    static let skeleton = JSONValue.object(["kind": .string("gateway")])

    @Sendable func newForm(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, _ in
            let section = StudySection.app(isNew: true)
            return appPage(session, section: section, appId: nil, values: section.values(in: Self.skeleton), problems: [], saved: false, status: .ok)
        }
    }

    @Sendable func create(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let section = StudySection.app(isNew: true)
            if let edited = try edited(form, section: section) {
                return appPage(session, section: section, appId: nil, values: edited, problems: [], saved: false, status: .ok)
            }
            let definition = try section.applying(form, to: Self.skeleton)
            let outcome = await AdminAPIError.outcome {
                () async throws(AdminAPIError) in try await pages.api.createApp(definition, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let created):
                let view = AppCredentialsView(appId: created.app.appId, testing: false, credentials: Self.credentials(created.credentials))
                return pages.render(view, title: "App created", session: session, status: .created)
            case .failure(let error) where [400, 409, 422].contains(error.status):
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "/appId", message: error.message)] : error.problems
                return appPage(session, section: section, appId: nil, values: form, problems: problems, saved: false, status: .unprocessableContent)
            case .failure(let error):
                throw error
            }
        }
    }

    /// Each platform's `key:token`, iOS first, for the page that shows them once.
    static func credentials(_ credentials: [String: String]) -> [AppCredentialsView.Credential] {
        credentials.sorted { $0.key > $1.key }.map { .init(platform: $0.key == "ios" ? "iOS" : "Android", id: $0.key, value: $0.value) }
    }

    /// New credentials for the app's test builds, shown once (the earlier ones stop working).
    @Sendable func issueTestingCredentials(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, _ in
            let issued = try await pages.api.issueTestingCredentials(appId, token: session.token, logger: context.logger)
            let view = AppCredentialsView(appId: issued.appId, testing: true, credentials: Self.credentials(issued.credentials))
            return pages.render(view, title: "Testing credentials", session: session, status: .created)
        }
    }

    // MARK: An app

    @Sendable func edit(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, _ in
            let definition = try await pages.api.app(appId, token: session.token, logger: context.logger)
            let section = StudySection.app(isNew: false)
            return appPage(
                session, section: section, appId: appId, values: section.values(in: definition), problems: [],
                saved: request.uri.queryParameters["saved"] != nil, status: .ok)
        }
    }

    @Sendable func save(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let section = StudySection.app(isNew: false)
            if let edited = try edited(form, section: section) {
                return appPage(session, section: section, appId: appId, values: edited, problems: [], saved: false, status: .ok)
            }
            let current = try await pages.api.app(appId, token: session.token, logger: context.logger)
            let definition = try section.applying(form, to: current)
            let outcome = await AdminAPIError.outcome {
                () async throws(AdminAPIError) in try await pages.api.updateApp(appId, definition, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success:
                return PageRenderer.redirect(to: "/apps/\(AdminAPIClient.segment(appId))?saved=1")
            case .failure(let error) where [400, 409, 422].contains(error.status):
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
                return appPage(session, section: section, appId: appId, values: form, problems: problems, saved: false, status: .unprocessableContent)
            case .failure(let error):
                throw error
            }
        }
    }

    /// The page again after a row or a choice changed on it (nothing saved), or nil for a save.
    func edited(_ form: FormFields, section: StudySection) throws -> FormFields? {
        guard let op = form["op"] else { return nil }
        guard let edit = FormEdit(op), let edited = section.editing(form, edit) else {
            throw APIError.badRequest("that row cannot be changed (the list is full, or the row is gone)")
        }
        return edited
    }

    func appPage(
        _ session: ConsoleSession, section: StudySection, appId: String?, values: FormFields, problems: [ValidationProblem], saved: Bool,
        status: HTTPResponse.Status
    ) -> Response {
        let view = AppView(
            heading: appId.map { "App \($0)" } ?? "New app", action: appId.map { "/apps/\(AdminAPIClient.segment($0))" } ?? "/apps/new",
            appId: appId ?? "", existing: appId != nil, saved: saved,
            form: FormHTML.render(section.views(values: values, problems: problems, spanish: true, readOnly: false), studyId: nil),
            problemReport: ProblemReport(
                "Not saved",
                toFix: StudyPageModels.problems(problems, page: section, values: values, sections: [], draft: .null, studyId: "")))
        return pages.render(view, title: view.heading, session: session, status: status)
    }

    // MARK: Push credentials

    @Sendable func push(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, _ in
            try await pushPage(appId, session: session, context: context, message: nil, status: .ok)
        }
    }

    @Sendable func uploadAPNs(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let credentials = APNsCredentials(
                teamId: FormField.trimmed(form["teamId"]), keyId: FormField.trimmed(form["keyId"]),
                privateKey: FormField.trimmed(form.text(file: "privateKeyFile", orPasted: "privateKey")), topic: FormField.trimmed(form["topic"]),
                environment: APNsCredentials.Environment(rawValue: form["environment"] ?? "") ?? .production)
            let body = Array((try? JSONEncoder().encode(credentials)) ?? Data())
            return try await upload(appId, platform: "ios", body: body, session: session, context: context)
        }
    }

    @Sendable func uploadFCM(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, form in
            let serviceAccount = (form ?? FormFields()).text(file: "serviceAccountFile", orPasted: "serviceAccount")
            return try await upload(appId, platform: "android", body: Array(serviceAccount.utf8), session: session, context: context)
        }
    }

    func upload(_ appId: String, platform: String, body: [UInt8], session: ConsoleSession, context: ServiceRequestContext) async throws -> Response {
        let outcome = await AdminAPIError.outcome {
            () async throws(AdminAPIError) in
            try await pages.api.uploadPush(appId, platform: platform, body: body, token: session.token, logger: context.logger)
        }
        switch outcome {
        case .success:
            return PageRenderer.redirect(to: "/apps/\(AdminAPIClient.segment(appId))/push")
        case .failure(let error) where [400, 422, 502].contains(error.status):
            let details = error.problems.map { "\($0.pointer): \($0.message)" }.joined(separator: "; ")
            return try await pushPage(
                appId, session: session, context: context, message: details.isEmpty ? error.message : "\(error.message): \(details)",
                status: .unprocessableContent)
        case .failure(let error):
            throw error
        }
    }

    @Sendable func removePush(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, form in
            guard let platform = form?["platform"], ["ios", "android"].contains(platform) else {
                return try await pushPage(appId, session: session, context: context, message: "There is no such platform.", status: .unprocessableContent)
            }
            try await pages.api.removePush(appId, platform: platform, token: session.token, logger: context.logger)
            return PageRenderer.redirect(to: "/apps/\(AdminAPIClient.segment(appId))/push")
        }
    }

    func pushPage(_ appId: String, session: ConsoleSession, context: ServiceRequestContext, message: String?, status: HTTPResponse.Status) async throws -> Response {
        let summaries = try await pages.api.pushCredentials(appId, token: session.token, logger: context.logger)
        let rows = summaries.map { summary in
            PushView.Credential(
                platform: summary.platform.rawValue, label: summary.platform == .ios ? "iOS (APNs)" : "Android (Firebase)",
                details: [
                    summary.teamId.map { "team \($0)" }, summary.keyId.map { "key \($0)" }, summary.topic.map { "topic \($0)" },
                    summary.environment, summary.projectId.map { "project \($0)" }, summary.clientEmail,
                ].compactMap { $0 }.joined(separator: ", "),
                fingerprint: summary.publicKeySHA256, updatedAt: StudyPageModels.timestamp(summary.updatedAt))
        }
        let view = PushView(appId: appId, credentials: rows, hasCredentials: !rows.isEmpty, message: message)
        return pages.render(view, title: "Push · \(appId)", session: session, status: status)
    }
}

/// `apps.mustache`.
struct AppsView: PageView {
    static let template = "apps"

    struct Row {
        var appId: String
        var orgId: String
        var name: String
        var kind: String
        /// The latest app version each platform announces.
        var ios: String
        var android: String
    }

    var apps: [Row]
    var hasApps: Bool
}

/// `app-created.mustache`: an app's new credentials, or its new testing credentials, shown once.
struct AppCredentialsView: PageView {
    static let template = "app-created"

    struct Credential {
        var platform: String
        var id: String
        var value: String
    }

    var appId: String
    var testing: Bool
    var credentials: [Credential]
}

/// `app.mustache`: a new app, or an app's definition.
struct AppView: PageView {
    static let template = "app"
    var heading: String
    /// Where the form posts.
    var action: String
    var appId: String
    var existing: Bool
    var saved: Bool
    var form: SafeHTML
    var problemReport: ProblemReport?
}

/// `push.mustache`: an app's push credentials.
struct PushView: PageView {
    static let template = "push"

    struct Credential {
        var platform: String
        var label: String
        var details: String
        var fingerprint: String
        var updatedAt: String
    }

    var appId: String
    var credentials: [Credential]
    var hasCredentials: Bool
    var message: String?
}
