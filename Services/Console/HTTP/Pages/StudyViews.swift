/// `studies.mustache`: the studies the admin holds a role on, found and filtered.
struct StudiesView: PageView {
    static let template = "studies"

    var studies: [StudyHeader]
    var hasStudies: Bool
    /// The admin holds a role on some study (whatever the filter shows).
    var hasAnyStudy: Bool
    var search: String
    var showClosed: Bool
    /// How many closed studies the list leaves out, in words.
    var hiddenClosed: String?
    var statuses: [OptionChoice]
}

/// `study-new.mustache`.
struct NewStudyView: PageView {
    static let template = "study-new"
    var hasApps: Bool
    var form: SafeHTML
    var problemReport: ProblemReport?
}

/// `study.mustache`: a study's summary, with its check-list before publishing.
struct StudySummaryView: PageView {
    static let template = "study"

    /// A page of the builder, with what it is for.
    struct Section {
        var slug: String
        var title: String
        var intro: String
    }

    var sections: [Section]
    var checklist: ChecklistView?
    /// The manual check-list; nil when it could not be read (the page says the rest).
    var manualChecklist: ManualChecklistView?
}

/// `section.mustache`: a section of the study builder (an activity's and a step's pages too).
struct SectionView: PageView {
    static let template = "section"

    struct Link {
        var label: String
        var href: String
    }

    /// A kind of the study's uploaded files, for the fields that suggest them (a `datalist`).
    struct UploadList {
        struct File {
            var url: String
            var name: String
        }

        var id: String
        var files: [File]
    }

    struct SageOnlyActivity {
        var id: String
        var href: String
        /// The last of the list (no comma after it).
        var last: Bool
    }

    /// What an activity imported from a Sage assessment says about it.
    struct SageAssessment {
        struct Reason {
            /// Its place in the assessment, then what the MyStudies apps lack.
            var message: String
        }

        /// The MyStudies apps are not sent it.
        var sageOnly: Bool
        var reasons: [Reason]
        var href: String
        var certificateHref: String
    }

    var slug: String
    var sectionTitle: String
    var intro: String
    var readOnly: Bool
    /// The draft's revision the form was filled from (saving over a newer one is refused).
    var base: String
    var saved: Bool
    /// Rows were added, removed or moved on this page and not saved yet.
    var unsaved: Bool
    var uploadLists: [UploadList]
    var form: SafeHTML
    var pageLinks: [Link] = []
    var hasSageOnly = false
    var sageOnlyActivities: [SageOnlyActivity] = []
    var sageAssessment: SageAssessment?
    var problemReport: ProblemReport?
    var warnings: [ProblemItem] = []
    var hasWarnings = false
    /// The consent page's form that reads a PDF's text into the document (editors).
    var consentPDF = false
    var consentPDFLanguages: [OptionChoice] = []
    /// The text of a PDF was just read into the form, not saved yet.
    var fromPDF: FromPDF?
    /// `unsaved` because rows were added, removed or moved (not a PDF read in).
    var rowsChanged = false

    /// A PDF whose text is in the form now: its name, and where the study keeps it.
    struct FromPDF {
        var name: String
        var href: String
        var language: String
    }
}
