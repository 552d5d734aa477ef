import Foundation

/// What a team confirms by hand before a study reaches participants: the WCP's manual check-list
/// (its "Checklist" page), which no rule of the study document can check. Each item is ticked by
/// a person, and who ticked it and when is kept; ticks do not keep a study from launching, as in
/// the WCP, but the launch page shows what is not ticked yet.
public enum LaunchChecklist {
    public struct Item: Sendable, Equatable {
        /// The item's id in the admin API; stable.
        public var id: String
        public var title: String
        public var detail: String
    }

    /// In the WCP's order.
    public static let items: [Item] = [
        Item(id: "irbApproval", title: "IRB review completed", detail: "The final IRB approval letter is in for every participating institution."),
        Item(
            id: "cohortIdentified", title: "Participant cohort identified",
            detail: "With a pre-screened group: the participants are defined and identified."),
        Item(
            id: "devicesVerified", title: "Participants' phones checked",
            detail: "With a pre-screened group: participants have a phone of a platform the study offers (iOS, Android)."),
        Item(
            id: "tokensDistributed", title: "Enrollment tokens distributed",
            detail: "With token eligibility: the tokens have reached the pre-screened participants."),
        Item(
            id: "instructionsProvided", title: "Install and start instructions sent",
            detail: "Participants know how to download and install the app, and when the study starts."),
        Item(
            id: "consentReviewed", title: "Full consent document reviewed",
            detail: "The consent as participants sign it has been read and matches the one the IRB reviewed."),
        Item(
            id: "questionnairesAdded", title: "Questionnaires added",
            detail: "At least the baseline questionnaires are in, scheduled for the intended period and frequency."),
        Item(
            id: "activeTasksAdded", title: "Active tasks added",
            detail: "Where the study uses them, active tasks are in, scheduled for the intended period and frequency."),
        Item(
            id: "resourcesAdded", title: "Resources added",
            detail: "The baseline resources are in, reviewed for their content and for when they show."),
        Item(id: "appTested", title: "Mobile app tested", detail: "The app build has been tested for content and function."),
        Item(
            id: "appStoreApproval", title: "App store approval",
            detail: "The app is approved by the App Store and Google Play and ready to hand out."),
    ]

    /// The item of `id`, compared by Unicode scalars (an id is an identity).
    public static func item(_ id: String) -> Item? {
        items.first { $0.id.unicodeScalars.elementsEqual(id.unicodeScalars) }
    }
}

/// The manual check-list of one study as the admin API shows it
/// (`GET /admin/v1/studies/{studyId}/checklist`): every item, ticked or not, with who ticked it
/// and when.
public struct StudyChecklistState: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var item: String
        public var title: String
        public var detail: String
        public var ticked: Bool
        /// The e-mail of the admin who ticked it; nil when not ticked.
        public var tickedBy: String?
        public var tickedAt: Date?

        public init(item: String, title: String, detail: String, ticked: Bool, tickedBy: String?, tickedAt: Date?) {
            self.item = item
            self.title = title
            self.detail = detail
            self.ticked = ticked
            self.tickedBy = tickedBy
            self.tickedAt = tickedAt
        }
    }

    public var items: [Entry]

    public init(items: [Entry]) {
        self.items = items
    }

    /// Every item of `LaunchChecklist.items`, with the ticks given (item id → who and when).
    public init(ticks: [String: (by: String, at: Date)]) {
        items = LaunchChecklist.items.map { item in
            let tick = ticks[item.id]
            return Entry(item: item.id, title: item.title, detail: item.detail, ticked: tick != nil, tickedBy: tick?.by, tickedAt: tick?.at)
        }
    }

    public var tickedCount: Int { items.count { $0.ticked } }
}

/// `PUT /admin/v1/studies/{studyId}/checklist`: the items that are ticked now. An item ticked
/// before keeps who ticked it and when; one left out is unticked.
public struct StudyChecklistTicks: Codable, Sendable, Equatable {
    public var ticked: [String]

    public init(ticked: [String]) {
        self.ticked = ticked
    }
}
