import Foundation
import Logging
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// The charts page: enrollment over time per site, responses per day per activity and adherence
/// per activity, drawn as SVG on the server. The counts are read back from the SVG's marks, not
/// looked at.
@Suite(.needsCluster) struct ConsoleChartTests {
    /// `data-*` attributes of every `<tag …>` in `svg` that has `data-value` (or `data-total`).
    static func marks(_ html: String, chart: String, tag: String, value: String = "data-value") -> [[String: String]] {
        guard let start = html.range(of: "id=\"\(chart)\""), let end = html[start.upperBound...].range(of: "</svg>") else { return [] }
        let svg = html[start.upperBound..<end.lowerBound]
        var found: [[String: String]] = []
        var series = ""
        for piece in svg.components(separatedBy: "<").dropFirst() {
            let attributes = Self.attributes(piece)
            if piece.hasPrefix("g "), let name = attributes["data-series"] { series = name }
            if piece.hasPrefix(tag + " "), attributes[value] != nil {
                var mark = attributes
                mark["series"] = attributes["data-series"] ?? series
                found.append(mark)
            }
        }
        return found
    }

    static func attributes(_ tag: String) -> [String: String] {
        var found: [String: String] = [:]
        let head = tag.prefix { $0 != ">" }
        for part in head.components(separatedBy: "\" ") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            let name = pair[0].split(separator: " ").last.map(String.init) ?? pair[0]
            found[name] = Browser.unescape(pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"/")))
        }
        return found
    }

    @Test func theChartsShowTheCountsThatWereCreated() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let registration = try #require(f.registration)
            let peer = try #require(f.response)
            let logger = Logger(label: "seed")
            // Two sites; three enrolled at North over two days (one withdrew), one at South, one
            // without a site. Activities: two up to date, one behind on "diary".
            let north = UUID(), south = UUID()
            for (id, name) in [(north, "North"), (south, "South <clinic>")] {
                try await registration.postgres.query(
                    "INSERT INTO study_sites (id, study_id, name, created_by) VALUES (\(id), 'CONSOLE1', \(name), 'test')", logger: logger)
            }
            let today = UTCDay.start(of: .now)
            let yesterday = UTCDay.start(of: .now, offset: -1)
            let people: [(UUID?, Date, Bool, Int?)] = [
                (north, yesterday.addingTimeInterval(3600), false, 0), (north, yesterday.addingTimeInterval(7200), true, nil),
                (north, today.addingTimeInterval(60), false, 2), (south, today.addingTimeInterval(120), false, 0),
                (nil, today.addingTimeInterval(180), false, nil),
            ]
            for (index, (site, enrolled, withdrew, missed)) in people.enumerated() {
                let userId = UUID()
                try await registration.postgres.query(
                    """
                    INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, verified)
                    VALUES (\(userId), 'CONSOLEAPP', 'ORG', \("p\(index)@charts.test"), \("p\(index)@charts.test"), 'x', true)
                    """, logger: logger)
                try await registration.postgres.query(
                    """
                    INSERT INTO participant_studies (user_id, study_id, status, enrolled_at, site_id, withdrawn_at)
                    VALUES (\(userId), 'CONSOLE1', \(withdrew ? "Withdrawn" : "inProgress"), \(enrolled), \(site),
                            \(withdrew ? Optional(enrolled.addingTimeInterval(600)) : nil))
                    """, logger: logger)
                if let missed {
                    try await registration.postgres.query(
                        """
                        INSERT INTO participant_activities (user_id, study_id, activity_id, activity_state, runs_total, runs_completed, runs_missed)
                        VALUES (\(userId), 'CONSOLE1', 'diary', 'inProgress', 10, 3, \(missed))
                        """, logger: logger)
                }
            }
            // Responses: NewSurvey twice today and once yesterday, Later once today.
            try await ConsoleResponseDataTests.seedDesign(peer)
            try await ConsoleResponseDataTests.seedDesign(peer, activity: "Later")
            let token = try await ConsoleResponseDataTests.enroll(peer)
            for (activity, number) in [("NewSurvey", 1), ("NewSurvey", 2), ("NewSurvey", 3), ("Later", 4)] {
                try await ConsoleResponseDataTests.submit(peer, appToken: token, activity: activity, number: number, text: "t")
            }
            _ = try await ConsoleResponseDataTests.settled(peer, count: 4)
            try await peer.postgres.query(
                "UPDATE responses SET received_at = received_at - interval '1 day' WHERE id = (SELECT min(id) FROM responses)",
                logger: logger)

            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await f.browser.get("/studies/CONSOLE1/charts")
            #expect(page.status == .ok)
            #expect(page.html.contains(#"aria-current="page">Charts"#))

            // Enrollment: each site's line ends at its total; the dots are the days totals changed.
            let lines = Self.marks(page.html, chart: "enrollment-chart", tag: "g", value: "data-total")
            #expect(lines.count == 3)
            let totals = Dictionary(uniqueKeysWithValues: lines.map { ($0["data-series"] ?? "", $0["data-total"] ?? "") })
            #expect(totals == ["North": "3", "South <clinic>": "1", "No site": "1"])
            let dots = Self.marks(page.html, chart: "enrollment-chart", tag: "circle")
            #expect(dots.filter { $0["series"] == "North" }.map { $0["data-value"] ?? "" } == ["2", "3"])
            // Totals are counted by day, so each line is steps: flat through a day, straight up at
            // the next day's mark, never a diagonal between the two.
            let polylines = page.html.components(separatedBy: "<polyline points=\"").dropFirst().compactMap {
                $0.split(separator: "\"", maxSplits: 1).first.map(String.init)
            }
            #expect(polylines.count >= 3)
            for line in polylines {
                let points = line.split(separator: " ").map { $0.split(separator: ",").compactMap { Double($0) } }
                try #require(points.allSatisfy { $0.count == 2 }, "\(line)")
                for (from, to) in zip(points, points.dropFirst()) {
                    #expect(from[0] == to[0] || from[1] == to[1], "a diagonal in \(line)")
                }
            }
            #expect(!page.html.contains("South <clinic>"), "a site's name is escaped in the SVG and the table")
            #expect(page.html.contains("South &lt;clinic&gt;"))

            // Responses per day: one column part per activity and day.
            let columns = Self.marks(page.html, chart: "responses-chart", tag: "rect")
            #expect(columns.count == 3)
            let counts = Dictionary(uniqueKeysWithValues: columns.map { ("\($0["series"] ?? "") \($0["data-label"] ?? "")", $0["data-value"] ?? "") })
            #expect(counts == [
                "NewSurvey \(UTCDay.string(yesterday))": "1", "NewSurvey \(UTCDay.string(today))": "2", "Later \(UTCDay.string(today))": "1",
            ])

            // Adherence on "diary": of the four in the study, two up to date, one behind, one not started.
            let bars = Self.marks(page.html, chart: "adherence-chart", tag: "rect")
            let adherence = Dictionary(uniqueKeysWithValues: bars.map { ($0["series"] ?? "", $0["data-value"] ?? "") })
            #expect(adherence == ["Up to date": "2", "Behind": "1", "Not started": "1"])

            // The same numbers in the tables beside the charts.
            #expect(page.html.contains(#"<tr><th scope="row">North</th><td class="number">3</td><td class="number">1</td>"#))
            #expect(page.html.contains(#"<th scope="row"><code>diary</code></th><td class="number">2</td><td class="number">1</td><td class="number">1</td>"#))
        }
    }

    @Test func anEmptyStudyHasNoChartsButSaysSo() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await f.browser.get("/studies/CONSOLE1/charts")
            #expect(page.status == .ok)
            #expect(page.html.contains("No one has enrolled yet."))
            #expect(page.html.contains("No responses in the last thirty days."))
            #expect(!page.html.contains("<svg"))
        }
    }
}
