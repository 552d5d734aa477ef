import Foundation
import StudyModels
import Testing

/// `ParticipantZone`: the zone a participant's runs are computed in, from what their app reports,
/// else the offsets their submissions carried, else the study's.
@Suite struct ParticipantZoneTests {
    static func at(_ text: String, _ offsetHours: Double) -> ParticipantZone.Sighting {
        ParticipantZone.Sighting(at: ISO8601DateFormatter().date(from: text) ?? .distantPast, offset: Int(offsetHours * 3_600))
    }

    let melbourne = TimeZone(identifier: "Australia/Melbourne") ?? .gmt

    @Test func aZoneTheAppReportsIsTaken() {
        let chosen = ParticipantZone.choose(reported: "Europe/Berlin", sightings: [Self.at("2026-03-01T00:00:00Z", 11)], studyZone: melbourne)
        #expect(chosen == ParticipantZone(zone: TimeZone(identifier: "Europe/Berlin") ?? .gmt, source: .reported))
        // A name that is no zone, or a bare offset, is not a report.
        for name in ["Mars/Olympus_Mons", "GMT+5", "", String(repeating: "A/", count: 100)] {
            #expect(ParticipantZone.choose(reported: name, sightings: [], studyZone: melbourne).source == .study, "\(name)")
        }
    }

    @Test func withNothingKnownTheStudysZoneIsUsed() {
        #expect(ParticipantZone.choose(reported: nil, sightings: [], studyZone: melbourne) == ParticipantZone(zone: melbourne, source: .study))
    }

    @Test func theStudysZoneIsKeptWhenItFitsTheirOffsetsOnBothSidesOfAChange() {
        let sightings = [Self.at("2026-03-30T00:00:00Z", 11), Self.at("2026-04-20T00:00:00Z", 10)]
        #expect(ParticipantZone.choose(reported: nil, sightings: sightings, studyZone: melbourne) == ParticipantZone(zone: melbourne, source: .inferred))
    }

    @Test func aParticipantWithoutSummerTimeGetsAZoneOfTheStudysRegionThatHasNone() {
        // +10 in late March (Melbourne is +11 then) and in May, within the sixty days read: Queensland.
        let sightings = [Self.at("2026-03-20T00:00:00Z", 10), Self.at("2026-05-10T00:00:00Z", 10)]
        let chosen = ParticipantZone.choose(reported: nil, sightings: sightings, studyZone: melbourne)
        #expect(chosen.source == .inferred)
        #expect(chosen.zone.identifier == "Australia/Brisbane")
        // Its rules, not only its offset: no summer time in the coming October either.
        #expect(chosen.zone.secondsFromGMT(for: ISO8601DateFormatter().date(from: "2026-11-01T00:00:00Z") ?? .distantPast) == 36_000)
    }

    @Test func onlyTheirRecentOffsetsCount() {
        // Offsets from London until January, then Melbourne's: they moved.
        let sightings = [Self.at("2025-08-01T00:00:00Z", 1), Self.at("2025-12-01T00:00:00Z", 0), Self.at("2026-03-01T00:00:00Z", 11)]
        #expect(ParticipantZone.choose(reported: nil, sightings: sightings, studyZone: melbourne).zone == melbourne)
        let london = TimeZone(identifier: "Europe/London") ?? .gmt
        let chosen = ParticipantZone.choose(reported: nil, sightings: sightings.dropLast().map { $0 }, studyZone: london)
        #expect(chosen == ParticipantZone(zone: london, source: .inferred))
    }

    @Test func offsetsNoZoneMadeGiveTheLatestOffsetAlone() {
        // +13:45 and +12:45 on the same day: no zone's rules.
        let sightings = [Self.at("2026-07-01T00:00:00Z", 13.75), Self.at("2026-07-01T01:00:00Z", 12.75)]
        let chosen = ParticipantZone.choose(reported: nil, sightings: sightings, studyZone: melbourne, candidates: ["Pacific/Chatham", "Pacific/Auckland"])
        #expect(chosen.source == .inferred)
        #expect(chosen.zone.secondsFromGMT() == 45_900)
    }

    @Test func theChoiceIsTheSameWhateverTheSightingsOrder() {
        let sightings = [Self.at("2026-01-10T00:00:00Z", 5.5), Self.at("2026-06-10T00:00:00Z", 5.5), Self.at("2026-03-10T00:00:00Z", 5.5)]
        let newYork = TimeZone(identifier: "America/New_York") ?? .gmt
        let first = ParticipantZone.choose(reported: nil, sightings: sightings, studyZone: newYork)
        let second = ParticipantZone.choose(reported: nil, sightings: sightings.reversed(), studyZone: newYork)
        #expect(first == second)
        #expect(first.zone.secondsFromGMT(for: sightings[1].at) == 19_800)
        // Kolkata is far from New York: their offset alone, not a city of another region.
        #expect(!first.zone.identifier.contains("/"), "\(first.zone.identifier)")
    }

    @Test func aParticipantFarFromTheStudysZoneIsGivenTheirOffsetNotAFarOffCity() {
        // A New York study; the phone writes +00:00. America/Danmarkshavn (Greenland) fits, and
        // is in the study's region, but 5 hours from New York: not taken.
        let newYork = TimeZone(identifier: "America/New_York") ?? .gmt
        let sightings = [Self.at("2026-11-20T10:00:00Z", 0), Self.at("2026-11-28T10:00:00Z", 0)]
        let chosen = ParticipantZone.choose(reported: nil, sightings: sightings, studyZone: newYork)
        #expect(chosen.source == .inferred)
        #expect(chosen.zone.secondsFromGMT() == 0 && !chosen.zone.identifier.contains("/"), "\(chosen.zone.identifier)")
        // Toronto's offsets (New York's, an hour from it or none) are taken by name.
        let toronto = [Self.at("2026-11-20T10:00:00Z", -5), Self.at("2026-07-20T10:00:00Z", -4)]
        let near = ParticipantZone.choose(reported: nil, sightings: toronto, studyZone: TimeZone(identifier: "America/Chicago") ?? .gmt)
        #expect(near.zone.identifier.hasPrefix("America/"), "\(near.zone.identifier)")
    }
}
