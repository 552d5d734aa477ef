import ConsoleCore
import Foundation
import Hummingbird
import JSONText
import ServiceKitHTTP
import StudyModels

/// The studies list, a new study, a study's overview and its section pages (`/studies/...`).
///
/// A section page reads the draft, shows the section's fields, and on save puts them into the
/// draft it reads again and saves the whole draft with `If-Match`, so nothing between the read and
/// the write is overwritten; the page also carries a fingerprint of the section as it was drawn,
/// so a colleague's change to the same section meanwhile is shown instead of lost.
package struct StudyRoutes: Sendable {
    let pages: ConsolePages
    /// What a section page posted back comes to (`SectionSave`, the console's core).
    let sections: SectionSave
    /// Reads the text of a consent document uploaded as a PDF (`consentFromPDF`).
    let pdfText: any PDFTextReading

    package init(pages: ConsolePages, sections: SectionSave, pdfText: any PDFTextReading) {
        self.pages = pages
        self.sections = sections
        self.pdfText = pdfText
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/", use: list)
        router.get("/studies/new", use: newStudyForm)
        router.post("/studies/new", use: createStudy)
        router.get("/studies/:studyId", use: overview)
        router.post("/studies/:studyId/consent-pdf", use: consentFromPDF)
        router.get("/studies/:studyId/:section", use: section)
        router.post("/studies/:studyId/:section", use: saveSection)
        // (The router does not fall back from the constant `activities` to `:section`.)
        router.get("/studies/:studyId/activities", use: activities)
        router.post("/studies/:studyId/activities", use: saveActivities)
        router.get("/studies/:studyId/activities/:activityId", use: activity)
        router.post("/studies/:studyId/activities/:activityId", use: saveActivity)
        router.get("/studies/:studyId/activities/:activityId/steps/:stepKey", use: step)
        router.post("/studies/:studyId/activities/:activityId/steps/:stepKey", use: saveStep)
    }

    // MARK: The list and a new study

    @Sendable func list(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, _ in
            let studies = try await pages.api.studies(token: session.token, logger: context.logger)
            let query = request.uri.queryParameters
            let filter = StudyListFilter(
                search: query["q"].map(String.init), status: query["status"].map(String.init), closed: query["closed"].map(String.init))
            let rows = filter.apply(studies).map { StudyHeader($0, role: $0.role) }
            let hidden = filter.showClosed || filter.status == .deactivated ? 0 : studies.filter { $0.status == .deactivated }.count
            let view = StudiesView(
                studies: rows, hasStudies: !rows.isEmpty, hasAnyStudy: !studies.isEmpty, search: filter.search, showClosed: filter.showClosed,
                hiddenClosed: hidden == 0 ? nil : hidden == 1 ? "1 closed study is not shown." : "\(hidden) closed studies are not shown.",
                statuses: [StudyStatus.preLaunch, .upcoming, .testing, .active, .paused, .deactivated].map { status in
                    .init(value: status.rawValue, label: StudyPageModels.statusLabel(status), selected: status == filter.status)
                })
            return pages.render(view, title: "Studies", session: session)
        }
    }

    @Sendable func newStudyForm(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, _ in
            let apps = try await pages.api.apps(token: session.token, logger: context.logger)
            var values = FormFields()
            values.append("/timeZone", "UTC")
            if apps.count == 1 { values.append("/appId", apps[0].appId) }
            return newStudyPage(session, apps: apps, values: values, problems: [], status: .ok)
        }
    }

    @Sendable func createStudy(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let apps = try await pages.api.apps(token: session.token, logger: context.logger)
            let section = StudySection.newStudy(apps: apps)
            let studyId = FormField.trimmed(form["/studyId"])
            let document = try section.applying(form, to: StudySection.newStudySkeleton)
            // The id is the admin API's path, so one the API cannot take is named here, together
            // with whatever else the form lacks: every problem in one round, in the words typed.
            if let problems = StudyChecks.newStudyProblems(studyId: studyId, document: document, section: section) {
                return newStudyPage(session, apps: apps, values: form, problems: problems, status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome {
                () async throws(AdminAPIError) in
                try await pages.api.saveDraft(studyId, document: document, precondition: .new, token: session.token, logger: context.logger)
            }
            if case .failure(let error) = outcome {
                guard [409, 412, 422].contains(error.status) else { throw error }
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "/studyId", message: error.message)] : error.problems
                return newStudyPage(session, apps: apps, values: form, problems: problems, status: .unprocessableContent)
            }
            return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/basics?created=1")
        }
    }

    func newStudyPage(
        _ session: ConsoleSession, apps: [AppDefinition], values: FormFields, problems: [ValidationProblem],
        status: HTTPResponse.Status
    ) -> Response {
        let section = StudySection.newStudy(apps: apps)
        let view = NewStudyView(
            hasApps: !apps.isEmpty,
            form: FormHTML.render(section.views(values: values, problems: problems, spanish: false, readOnly: false), studyId: nil),
            problemReport: ProblemReport(
                "The study was not created",
                toFix: StudyPageModels.problems(problems, page: section, values: values, sections: [], draft: .null, studyId: "")))
        return pages.render(view, title: "New study", session: session, status: status)
    }

    // MARK: A study

    @Sendable func overview(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            let state = try await pages.load(studyId, session: session, context: context)
            let storage = await pages.storageFinding(state, session: session, context: context)
            let manual = try await pages.api.checklist(of: studyId, token: session.token, logger: context.logger)
            return pages.render(
                StudySummaryView(
                    sections: state.sections.map { .init(slug: $0.slug, title: $0.title, intro: $0.intro) },
                    checklist: ChecklistView(state.checklist(storage: storage)),
                    manualChecklist: ManualChecklistView(
                        manual, editable: state.editable, saved: request.uri.queryParameters["ticked"] != nil)),
                title: state.summary.name, session: session, state: state, current: nil)
        }
    }

    @Sendable func section(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let slug = try context.parameters.decoded("section")
        return try await showSection(request, context, named: "a section \(slug)", withApps: true) { state in
            state.sections.first { $0.slug == slug }
        }
    }

    @Sendable func saveSection(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let slug = try context.parameters.decoded("section")
        return try await saveSection(request, context, named: "a section \(slug)", withApps: true) { state in
            state.sections.first { $0.slug == slug }
        }
    }

    @Sendable func activities(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await showSection(request, context, named: "activities list") { $0.sections.first { $0.slug == "activities" } }
    }

    @Sendable func saveActivities(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await saveSection(request, context, named: "activities list") { $0.sections.first { $0.slug == "activities" } }
    }

    /// An activity's own page: its steps and schedule.
    @Sendable func activity(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let activityId = try context.parameters.decoded("activityId")
        return try await showSection(request, context, named: "an activity \(activityId)") { Self.activitySection($0, activityId) }
    }

    @Sendable func saveActivity(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let activityId = try context.parameters.decoded("activityId")
        return try await saveSection(request, context, named: "an activity \(activityId)") { Self.activitySection($0, activityId) }
    }

    /// A step's own page: its text, response format and branching.
    @Sendable func step(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let activityId = try context.parameters.decoded("activityId")
        let key = try context.parameters.decoded("stepKey")
        return try await showSection(request, context, named: "step \(key) in an activity \(activityId)") {
            Self.stepSection($0, activityId, key)
        }
    }

    @Sendable func saveStep(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let activityId = try context.parameters.decoded("activityId")
        let key = try context.parameters.decoded("stepKey")
        return try await saveSection(request, context, named: "step \(key) in an activity \(activityId)") {
            Self.stepSection($0, activityId, key)
        }
    }

    static func stepSection(_ state: StudyPageState, _ activityId: String, _ key: String) -> StudySection? {
        guard case .array(let activities) = state.draft[pointer: JSONPointer(tokens: ["activities"])],
            let index = activities.firstIndex(where: { $0["activityId"] == .string(activityId) }),
            case .array(let steps) = activities[index]["steps"],
            let stepIndex = steps.firstIndex(where: { $0["key"] == .string(key) })
        else { return nil }
        return StudySection.step(index: index, activityId: activityId, stepIndex: stepIndex, key: key)
    }

    static func activitySection(_ state: StudyPageState, _ activityId: String) -> StudySection? {
        guard case .array(let activities) = state.draft[pointer: JSONPointer(tokens: ["activities"])],
            let index = activities.firstIndex(where: { $0["activityId"] == .string(activityId) })
        else { return nil }
        return StudySection.activity(index: index, activityId: activityId, sageOnly: StudySection.isSageOnly(activities[index]))
    }

    /// `withApps`: the page may be the one that chooses the study's app (the section pages).
    func showSection(
        _ request: Request, _ context: ServiceRequestContext, named what: String, withApps: Bool = false,
        _ resolve: @escaping @Sendable (StudyPageState) -> StudySection?
    ) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            let state = try await pages.load(studyId, session: session, context: context, withApps: withApps)
            guard let section = resolve(state) else {
                return pages.errorPage(session, status: .notFound, heading: "Not found", message: "The study has no \(what).")
            }
            let drawn = pages.savedForm(section, state: state)
            return try await sectionPage(
                session, state: state, section: section, form: drawn.form, problems: [], base: drawn.base,
                saved: request.uri.queryParameters["saved"] != nil, warnings: [], status: .ok, context: context)
        }
    }

    func saveSection(
        _ request: Request, _ context: ServiceRequestContext, named what: String, withApps: Bool = false,
        _ resolve: @escaping @Sendable (StudyPageState) -> StudySection?
    ) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let state = try await pages.load(studyId, session: session, context: context, withApps: withApps)
            guard let section = resolve(state) else {
                return pages.errorPage(session, status: .notFound, heading: "Not found", message: "The study has no \(what).")
            }
            let drawn = SectionSave.Drawn(summary: state.summary, draft: state.draft, revision: state.revision, editable: state.editable)
            let saved: DraftSaved
            let document: JSONValue
            switch try await sections.post(form, to: section, of: studyId, drawn: drawn, token: session.token, logger: context.logger) {
            case .edited(let edited, let base):
                // A row added, removed or moved: the page again, changed, and nothing saved yet.
                return try await sectionPage(
                    session, state: state, section: section, submitted: edited, problems: [], base: base, status: .ok, unsaved: true,
                    context: context)
            case .editRefused(let base):
                return try await sectionPage(
                    session, state: state, section: section, submitted: form,
                    problems: [.init(pointer: "", message: "That row cannot be changed (the list is full, or the row is gone).")],
                    base: base, status: .unprocessableContent, context: context)
            case .changedMeanwhile(let current, let by, let at):
                let message = "This section changed while you were editing it (the draft was last saved by \(by) at \(StudyPageModels.timestamp(at))). Your version is below and is not saved: compare, then save again to replace theirs."
                return try await sectionPage(
                    session, state: state, section: section, submitted: form, problems: [.init(pointer: "", message: message)],
                    base: current, status: .conflict, context: context)
            case .refused(let problems, let conflict, let current):
                return try await sectionPage(
                    session, state: state, section: section, submitted: form, problems: problems, base: current,
                    status: conflict ? .conflict : .unprocessableContent, context: context)
            case .saved(let reply, let savedDocument):
                (saved, document) = (reply, savedDocument)
            }
            guard saved.warnings.isEmpty else {
                let reloaded = try await pages.load(studyId, session: session, context: context, withApps: withApps)
                // A step saved under a new key is that key's page now (its form posts there).
                let current = section.namedBy == nil ? section : StudySection.activityPage(holding: section.root, in: reloaded.draft) ?? section
                let drawn = pages.savedForm(current, state: reloaded)
                return try await sectionPage(
                    session, state: reloaded, section: current, form: drawn.form, problems: [], base: drawn.base, saved: true,
                    warnings: saved.warnings, status: .ok, context: context)
            }
            return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/\(section.path(after: document))?saved=1")
        }
    }

    /// A section's page drawn again from a submitted form (`values`), with its problems.
    func sectionPage(
        _ session: ConsoleSession, state: StudyPageState, section: StudySection, submitted values: FormFields,
        problems: [ValidationProblem], base: String, status: HTTPResponse.Status, unsaved: Bool = false,
        fromPDF: SectionView.FromPDF? = nil, context: ServiceRequestContext
    ) async throws -> Response {
        try await sectionPage(
            session, state: state, section: section, form: SectionForm(section, values: values, problems: problems, state: state),
            problems: problems, base: base, saved: false, warnings: [], status: status, unsaved: unsaved, fromPDF: fromPDF,
            context: context)
    }

    /// A section's page around its drawn form; `problems`: the ones the form was drawn with.
    func sectionPage(
        _ session: ConsoleSession, state: StudyPageState, section: StudySection, form: SectionForm, problems: [ValidationProblem],
        base: String, saved: Bool, warnings: [ValidationProblem], status: HTTPResponse.Status, unsaved: Bool = false,
        fromPDF: SectionView.FromPDF? = nil, context: ServiceRequestContext
    ) async throws -> Response {
        // The study's uploaded files, read only for a page that shows a field offering them.
        let kinds = form.uploads
        var uploadLists: [SectionView.UploadList] = []
        if state.editable, !kinds.isEmpty {
            let files = try await pages.api.files(of: state.summary.studyId, token: session.token, logger: context.logger)
            uploadLists = FormField.Uploads.allCases.filter(kinds.contains).map { kind in
                .init(id: kind.rawValue, files: files.filter { kind.includes(contentType: $0.contentType) }.map { .init(url: $0.url, name: $0.name) })
            }
        }
        var view = SectionView(
            slug: section.slug, sectionTitle: section.title, intro: section.intro, readOnly: !state.editable, base: base, saved: saved,
            unsaved: unsaved, uploadLists: uploadLists,
            form: SafeHTML(escapedMarkup: ""))
        view.fromPDF = fromPDF
        view.rowsChanged = unsaved && fromPDF == nil
        let study = AdminAPIClient.segment(state.summary.studyId)
        let activities = state.draft["activities"]?.array ?? []
        if section.slug == "consent" {
            // The signed document as a participant reads it, in each of the study's languages.
            let languages = ["en"] + (state.draft["languages"]?.array ?? []).compactMap(\.string)
                .filter { !$0.unicodeScalars.elementsEqual("en".unicodeScalars) }
            view.pageLinks = languages.map { code in
                .init(
                    label: "Preview the signed document (PDF), \(LanguageNames.name(code))",
                    href: "/studies/\(study)/consent-preview.pdf?language=\(AdminAPIClient.segment(code))")
            }
            view.consentPDF = state.editable
            view.consentPDFLanguages = languages.filter { code in ConsentFromPDF.languages.contains { $0.unicodeScalars.elementsEqual(code.unicodeScalars) } }
                .map { .init(value: $0, label: LanguageNames.name($0), selected: $0 == "en") }
        } else if section.slug == "activities" {
            view.pageLinks = [.init(label: "Import an activity designed elsewhere, or a Sage assessment", href: "/studies/\(study)/import")]
            let sageOnly = activities.filter(StudySection.isSageOnly).compactMap { $0["activityId"]?.string }
            view.hasSageOnly = !sageOnly.isEmpty
            view.sageOnlyActivities = sageOnly.enumerated().map { index, id in
                .init(id: id, href: "/studies/\(study)/activities/\(AdminAPIClient.segment(id))", last: index == sageOnly.count - 1)
            }
        } else if let activity = section.activityId {
            if section.namedBy == nil, let assessment = activities.first(where: { $0["activityId"]?.string == activity })?["assessment"] {
                let reasons = assessment["sageOnly"]?.array ?? []
                view.sageAssessment = .init(
                    sageOnly: !reasons.isEmpty,
                    // Each at its place in the assessment, said by the assessment's own members.
                    reasons: reasons.map {
                        let reason = ValidationProblem(pointer: $0["pointer"]?.string ?? "", message: $0["message"]?.string ?? "")
                        return .init(message: ProblemItem(inFile: reason).message)
                    },
                    href: "/studies/\(study)/activities/\(AdminAPIClient.segment(activity))/assessment.json",
                    certificateHref: "/studies/\(study)/sage-certificate")
            }
            let activityPath = "/studies/\(study)/activities/\(AdminAPIClient.segment(activity))"
            // A Sage-only activity has no MyStudies screens to preview.
            let sageOnly = activities.first { $0["activityId"]?.string == activity }.map(StudySection.isSageOnly) ?? false
            var links: [SectionView.Link] = sageOnly ? [] : [.init(label: "Preview it as the app shows it", href: activityPath + "/preview")]
            if section.namedBy != nil { links.insert(.init(label: "Back to activity \(activity) and its steps", href: activityPath), at: 0) }
            view.pageLinks = links
        }
        let values = form.values
        view.form = form.html
        view.problemReport = ProblemReport(
            "Not saved",
            toFix: StudyPageModels.problems(
                problems, page: section, values: values, sections: state.sections, draft: state.draft, studyId: state.summary.studyId))
        view.warnings = StudyPageModels.problems(
            warnings, page: section, values: values, sections: state.sections, draft: state.draft, studyId: state.summary.studyId)
        view.hasWarnings = !warnings.isEmpty
        return pages.render(view, title: "\(section.title) · \(state.summary.name)", session: session, state: state, current: section.slug, status: status)
    }
}
