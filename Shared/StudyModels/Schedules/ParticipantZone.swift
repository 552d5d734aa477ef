import Foundation

/// The zone a participant's runs are computed in, and where it came from (docs/schedules.md,
/// The participant's zone): the zone their app reports, else one that fits the UTC offsets their
/// recent submissions carried, else the study's.
public struct ParticipantZone: Sendable, Equatable {
    public enum Source: String, Sendable, Equatable {
        /// Their app sent it.
        case reported
        /// It fits the offsets their submissions carried.
        case inferred
        /// Nothing known of them: the study's zone.
        case study
    }

    public var zone: TimeZone
    public var source: Source

    public init(zone: TimeZone, source: Source) {
        self.zone = zone
        self.source = source
    }

    /// An offset a submission carried: the instant and its offset east of UTC, in seconds.
    public struct Sighting: Sendable, Equatable {
        public var at: Date
        public var offset: Int

        public init(at: Date, offset: Int) {
            self.at = at
            self.offset = offset
        }
    }

    /// Only the sightings of this many days before the latest are read: a participant who moved
    /// (or travelled) is in the zone they are in now.
    public static let recentDays = 60
    /// At most this many of those, the latest: enough to see both sides of a change of offset.
    public static let mostSightings = 200
    /// How far from the study zone's offset a zone of its region may be, to be taken by name.
    public static let nearHours = 3

    /// The participant's zone. `reported`: an IANA name their app sent, if any. `sightings`: the
    /// offsets their submissions carried, in any order. `candidates`: the zone names to choose
    /// among (every zone the system knows, by default).
    public static func choose(
        reported: String?, sightings: [Sighting], studyZone: TimeZone,
        candidates: [String] = TimeZone.knownTimeZoneIdentifiers
    ) -> ParticipantZone {
        if let reported, reported.unicodeScalars.count <= 64, let zone = TimeZone(identifier: reported), zone.identifier.contains("/") || zone.identifier == "UTC" {
            return ParticipantZone(zone: zone, source: .reported)
        }
        guard let latest = sightings.max(by: { $0.at < $1.at }) else { return ParticipantZone(zone: studyZone, source: .study) }
        let since = latest.at.addingTimeInterval(-Double(recentDays) * 86_400)
        let recent = sightings.filter { $0.at >= since }.sorted { $0.at > $1.at }.prefix(mostSightings)
        let fits = { (zone: TimeZone) in
            let table = ZoneOffsets.of(zone)
            return recent.allSatisfy { table.offset(at: Int64($0.at.timeIntervalSince1970.rounded(.down))) == Int64($0.offset) }
        }
        if fits(studyZone) { return ParticipantZone(zone: studyZone, source: .inferred) }
        // Several zones can fit (every zone at +10:00 without summer time fits a Brisbane
        // participant). A named zone is taken only where it is likely theirs: in the study zone's
        // region and within `nearHours` of the study zone's offset (Brisbane for a Melbourne
        // study), the first by name, so every replica makes the same choice. Anyone else (a
        // participant of a New York study whose phone writes +00:00) is given their offset alone:
        // a far-off city picked by name would claim summer-time rules nothing showed.
        let region = studyZone.identifier.split(separator: "/").first.map(String.init) ?? ""
        let studyOffset = studyZone.secondsFromGMT(for: latest.at)
        let near = candidates.filter { $0.hasPrefix(region + "/") }.sorted()
        for name in near {
            guard let zone = TimeZone(identifier: name), abs(zone.secondsFromGMT(for: latest.at) - studyOffset) <= nearHours * 3_600
            else { continue }
            if fits(zone) { return ParticipantZone(zone: zone, source: .inferred) }
        }
        // No nearby zone fits them all: the latest offset alone.
        let fixed = TimeZone(secondsFromGMT: min(max(latest.offset, -18 * 3_600), 18 * 3_600)) ?? studyZone
        return ParticipantZone(zone: fixed, source: .inferred)
    }
}
