import Foundation
import JSONText
import StudyModels

/// The study-metadata replies the MyStudies Android app recorded from a MyStudies deployment
/// (`Tests/Fixtures/mystudies-api`, provenance in `Tests/Fixtures/PROVENANCE.md`), put together as
/// `studystack-import studies read` writes an export: one study with the six recorded
/// `activityList` entries (one per frequency), each served with the recorded design, and the
/// recorded `eligibilityConsent`.
public enum RecordedMyStudiesReplies {
    public static var folder: URL { Conformance.root.appendingPathComponent("mystudies-api") }

    /// The frequencies the recording has an `activityList` entry for.
    public static let frequencies = ["onetime", "daily", "dailywithinaday", "manuallschedule", "monthly", "weekly"]

    public static func reply(_ name: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// The recorded `activityList` entries, in `frequencies`' order.
    public static func activityListItems() throws -> [JSONValue] {
        try frequencies.map { try reply("activityList-\($0).json") }
    }

    /// The export of one study `studyId`, at the source's version `2.3`.
    public static func export(studyId: String = "REGteststudy") throws -> MyStudiesStudyExport {
        let items = try activityListItems()
        let design = try reply("activity-CBQ-1.2.json")
        let listing = try JSONDecoder().decode(JSONValue.self, from: Data("""
            {"studyId": "\(studyId)", "studyVersion": "2.3", "title": "Regression study", "category": "Health",
             "sponsorName": "HPHCI", "tagline": "", "status": "Active", "logo": "",
             "settings": {"enrolling": true, "rejoin": false, "platform": "all"}}
            """.utf8))
        let study = MyStudiesStudyExport.Study(
            listing: listing, eligibilityConsent: try reply("eligibilityConsent.json"),
            activityList: .object(JSONObject(pairs: [("activities", .array(items))])),
            activities: items.map { .init(activityId: $0["activityId"]?.string ?? "", version: "1.0", reply: design) })
        return MyStudiesStudyExport(source: "https://wcp.example.org/StudyMetaData", readAt: "2026-12-05T00:00:00Z", studies: [study])
    }

    /// `export` as the JSON text the command writes.
    public static func exportText(studyId: String = "REGteststudy") throws -> String {
        String(decoding: try JSONEncoder().encode(try export(studyId: studyId)), as: UTF8.self)
    }
}
