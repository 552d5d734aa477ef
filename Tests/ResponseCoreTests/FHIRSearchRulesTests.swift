import FHIR
import Foundation
import ResponseCore
import StudyModels
import Testing

/// How the FHIR API reads a search: strictly, so a client never takes a wider result for the one
/// it asked for.
@Suite struct FHIRSearchRulesTests {
    static let naming = FHIRNaming(base: "https://studies.example.org/fhir/r4")

    static func parse(_ type: String, _ query: [(String, String)]) throws(FHIRRefusal) -> FHIRSearch {
        try FHIRSearch.parse(type: type, query: query.map { (name: $0.0, value: $0.1) }, studyId: "MY_STUDY", naming: naming)
    }

    static func refusal(_ type: String, _ query: [(String, String)]) -> String? {
        do {
            _ = try parse(type, query)
            return nil
        } catch .invalidSearch(let why) {
            return why
        } catch {
            return "\(error)"
        }
    }

    /// `_lastUpdated` compares the time as the resource shows it, to the millisecond: after the
    /// `lastUpdated` a client was given is after it, though the row was stored to the microsecond.
    @Test func lastUpdatedComparesTheMillisecondShown() throws {
        func range(_ values: String...) throws -> (Int64?, Int64?) {
            let search = try Self.parse("Consent", values.map { ("_lastUpdated", $0) })
            let (from, before) = search.lastUpdatedRange
            // Each bound is its millisecond's first microsecond, as PostgreSQL receives it.
            for bound in [from, before].compactMap(\.self) {
                let micros = Int64(bound.timeIntervalSince1970 * 1_000_000)
                #expect(micros % 1000 == 0, "\(micros)")
            }
            return (from.map { PreciseInstants.milliseconds($0, up: false) }, before.map { PreciseInstants.milliseconds($0, up: false) })
        }
        let shown: Int64 = 1_796_411_106_283  // 2026-12-04T19:05:06.283Z
        #expect(try range("gt2026-12-04T19:05:06.283Z") == (shown + 1, nil))
        #expect(try range("ge2026-12-04T19:05:06.283Z") == (shown, nil))
        #expect(try range("lt2026-12-04T19:05:06.283Z") == (nil, shown))
        #expect(try range("le2026-12-04T19:05:06.283Z") == (nil, shown + 1))
        // Whole seconds and days; of two bounds on one side, the narrower.
        #expect(try range("gt2026-12-04T19:05:06Z") == (shown - 283 + 1, nil))
        #expect(try range("ge2026-12-04", "lt2026-12-05") == (1_796_342_400_000, 1_796_428_800_000))
        #expect(try range("ge2026-12-04", "gt2026-12-04T19:05:06.283Z") == (shown + 1, nil))
        // A client's finer fraction is taken to the millisecond it falls in.
        #expect(try range("gt2026-12-04T19:05:06.2834Z") == (shown + 1, nil))
        #expect(try range("ge2026-12-04T19:05:06.2834Z") == (shown + 1, nil))
        #expect(try range("lt2026-12-04T19:05:06.2834Z") == (nil, shown + 1))
    }

    @Test func eachParameterIsReadAsItsTypeSaysIt() throws {
        let search = try Self.parse("QuestionnaireResponse", [
            ("subject", "Patient/42"), ("questionnaire", "https://studies.example.org/fhir/r4/Questionnaire/MY.STUDY/daily%20log|1.1"),
            ("_lastUpdated", "ge2026-03-01"), ("_lastUpdated", "lt2026-03-02T00:00:00Z"), ("_count", "10"),
            ("_include", "QuestionnaireResponse:subject"), ("_cursor", "77"),
        ])
        #expect(search.participant == 42)
        #expect(search.activityId == "daily log")
        #expect(search.version == "1.1")
        #expect(search.lastUpdated.map(\.0) == [.ge, .lt])
        #expect(search.lastUpdated.map(\.1) == [Date(timeIntervalSince1970: 1_772_323_200), Date(timeIntervalSince1970: 1_772_409_600)])
        #expect(search.count == 10)
        #expect(search.include)
        #expect(search.after == 77)
        let patients = try Self.parse("Patient", [("_id", "1,2,x"), ("_summary", "count"), ("_revinclude", "ResearchSubject:individual")])
        #expect(patients.ids == [1, 2], "an id that cannot be a participant's matches nothing")
        #expect(patients.summaryCount && patients.revInclude)
        let subjects = try Self.parse("ResearchSubject", [("identifier", "https://studies.example.org/fhir/r4/sid/MY.STUDY/participant|7")])
        #expect(subjects.identifier == "7")
        #expect(try Self.parse("Patient", []).count == FHIRSearch.defaultCount)
    }

    @Test func whatIsNotSupportedIsRefusedWithWhy() {
        #expect(Self.refusal("Patient", [("name", "Smith")])?.contains("not searched by name") == true)
        #expect(Self.refusal("Patient", [("_count", "501")])?.contains("0 to 500") == true)
        #expect(Self.refusal("Patient", [("_count", "-1")]) != nil)
        #expect(Self.refusal("Patient", [("_summary", "true")])?.contains("count only") == true)
        #expect(Self.refusal("Patient", [("_cursor", "abc")])?.contains("_cursor") == true)
        #expect(Self.refusal("Patient", [("_lastUpdated", "2026-03-01")])?.contains("prefix") == true, "FHIR's eq, a whole day, is not taken")
        #expect(Self.refusal("Patient", [("_lastUpdated", "ge2026-02-30")]) != nil)
        #expect(Self.refusal("Patient", [("_lastUpdated", "ge2026-03-01"), ("_lastUpdated", "le2026-04-01"), ("_lastUpdated", "le2026-05-01")]) != nil)
        #expect(Self.refusal("Patient", [("_revinclude", "Observation:subject")]) != nil)
        #expect(Self.refusal("QuestionnaireResponse", [("subject", "Group/1")]) != nil)
        #expect(Self.refusal("QuestionnaireResponse", [("subject", "Patient/1"), ("patient", "Patient/1")]) != nil)
        #expect(Self.refusal("QuestionnaireResponse", [("questionnaire", "https://elsewhere.example/Questionnaire/x")])?.contains("canonical URL") == true)
        #expect(Self.refusal("ResearchSubject", [("identifier", "urn:other|7")])?.contains("system must be") == true)
        #expect(Self.refusal("Patient", [("identifier", "1"), ("identifier", "2")])?.contains("more than once") == true)
        #expect(Self.refusal("Patient", [("_id", Array(repeating: "1", count: 501).joined(separator: ","))]) != nil)
        #expect(throws: FHIRRefusal.notSearchable("Encounter")) { try Self.parse("Encounter", []) }
    }

    /// Questionnaires are listed from the study's version history: one per activity version, in
    /// the order first published; active while current, retired once superseded or removed, or
    /// when the study closed.
    @Test func questionnairesAreTheStudysPublishedActivityVersions() throws {
        func at(_ day: Int) -> Date { Date(timeIntervalSince1970: 1_772_323_200 + Double(day) * 86_400) }
        func activity(_ id: String, _ number: Int) -> StudyEvent.ActivityVersion {
            .init(activityId: id, version: number, label: "1.\(number - 1)", type: "questionnaire")
        }
        let history = StudyVersionHistory(studyId: "MY_STUDY", versions: [
            .init(version: 1, label: "1.0", publishedAt: at(0), name: "Sleep", activities: [activity("daily", 1), activity("intake", 1)]),
            .init(version: 2, label: "1.1", publishedAt: at(5), name: "Sleep", activities: [activity("daily", 2), activity("intake", 1)]),
            .init(version: 3, label: "1.2", publishedAt: at(9), name: "Sleep", activities: [activity("daily", 2)]),
        ])
        let listing = FHIRQuestionnaireListing(history: history, studyClosed: false)
        #expect(listing.entries.count == 3)
        #expect(listing.entries.map { "\($0.activityId) \($0.version) \($0.retired ? "retired" : "active")" } == [
            "daily 1.0 retired", "intake 1.0 retired", "daily 1.1 active",
        ])
        #expect(listing.entries.map(\.publishedAt) == [at(0), at(0), at(5)])
        #expect(listing.entries[2].id == FHIRId.questionnaire(studyId: "MY_STUDY", activityId: "daily", version: "1.1"))
        #expect(FHIRQuestionnaireListing(history: history, studyClosed: true).entries.allSatisfy { $0.retired })

        let url = Self.naming.questionnaireURL(studyId: "MY_STUDY", activityId: "daily")
        let daily = try Self.parse("Questionnaire", [("url", url)])
        #expect(listing.matches(daily).map(\.place) == [1, 3])
        let exact = try Self.parse("Questionnaire", [("url", url), ("version", "1.0")])
        #expect(listing.matches(exact).map(\.entry.version) == ["1.0"])
        let active = try Self.parse("Questionnaire", [("status", "active"), ("_cursor", "1")])
        #expect(listing.matches(active).map(\.place) == [3], "a page starts after its cursor")
        let byIdentifier = try Self.parse("Questionnaire", [("identifier", "intake")])
        #expect(listing.matches(byIdentifier).count == 1)
        let contradicting = try Self.parse("Questionnaire", [("url", url), ("identifier", "intake")])
        #expect(contradicting.nothing && listing.matches(contradicting).isEmpty, "two parameters that disagree match nothing")
        let byId = try Self.parse("Questionnaire", [("_id", "\(listing.entries[1].id),not_an/id")])
        #expect(listing.matches(byId).map(\.entry.activityId) == ["intake"])
        #expect(Self.refusal("Questionnaire", [("url", url + "|1.0")])?.contains("canonical URL") == true, "url takes no version")
        #expect(Self.refusal("Questionnaire", [("subject", "Patient/1")]) != nil)
    }

    /// Designs decoded for FHIR pages are kept by study, activity and version (by their scalars),
    /// the longest unused dropped past the capacity, so a deployment of many studies holds a
    /// bounded number.
    @Test func decodedDesignsAreKeptBoundedAndByExactKey() {
        let designs = DecodedDesigns()
        func design(_ id: String) -> ActivityDesign {
            ActivityDesign(type: .questionnaire, metadata: ActivityMetadata(activityId: id), steps: [])
        }
        designs.keep(design("caf\u{e9}"), studyKey: "S", activityId: "caf\u{e9}", version: "1.0")
        #expect(designs.design(studyKey: "S", activityId: "cafe\u{301}", version: "1.0") == nil, "another activity's design")
        #expect(designs.design(studyKey: "T", activityId: "caf\u{e9}", version: "1.0") == nil, "another study's design")
        #expect(designs.design(studyKey: "S", activityId: "caf\u{e9}", version: "1.0")?.metadata.activityId == "caf\u{e9}")
        for index in 0..<DecodedDesigns.capacity {
            designs.keep(design("a\(index)"), studyKey: "S", activityId: "a\(index)", version: "1.0")
            // The first design is read between keeps: the latest used is not the one dropped.
            if index == DecodedDesigns.capacity / 2 { _ = designs.design(studyKey: "S", activityId: "caf\u{e9}", version: "1.0") }
        }
        #expect(designs.count == DecodedDesigns.capacity)
        #expect(designs.design(studyKey: "S", activityId: "caf\u{e9}", version: "1.0") != nil)
        #expect(designs.design(studyKey: "S", activityId: "a0", version: "1.0") == nil, "the longest unused was dropped")
        #expect(designs.design(studyKey: "S", activityId: "a\(DecodedDesigns.capacity - 1)", version: "1.0") != nil)
    }
}
