import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The response-data pages over the response service's admin API: the tables, a table as a data
/// grid (sorting, filtering, paging, child rows), the failed responses and their reprocessing,
/// forwarding, participant-property uploads, and what a viewer may not do.
@Suite(.needsCluster) struct ConsoleResponseDataTests {
    /// The original server's NewSurvey design, as if fetched from study-metadata.
    static func seedDesign(_ peer: ConsoleFixture.ResponsePeer, activity: String = "NewSurvey", version: String = "1") async throws {
        let design = try String(
            contentsOf: Conformance.labkey.appendingPathComponent("SurveyMetadata/DYNAMICSCHEMASTUDY_NewSurvey_1.json"), encoding: .utf8)
            .replacingOccurrences(of: #""activityId": "NewSurvey""#, with: #""activityId": "\#(activity)""#)
        try await peer.postgres.query(
            """
            INSERT INTO activity_designs (study_key, activity_id, version, design)
            VALUES ('CONSOLE1', \(activity), \(version), \(design)::jsonb) ON CONFLICT DO NOTHING
            """, logger: Logger(label: "test"))
    }

    /// Enrolls a participant through the app API; returns their app token.
    static func enroll(_ peer: ConsoleFixture.ResponsePeer) async throws -> String {
        try await peer.client.execute(
            uri: "/mobileappstudy-enroll.api?studyId=CONSOLE1&allowDataSharing=true", method: .post
        ) { response in
            let object = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
            return try #require((object?["data"] as? [String: Any])?["appToken"] as? String, "\(String(buffer: response.body))")
        }
    }

    /// Submits NewSurvey's original response with `IntegerField` and `ShortTextField` set.
    static func submit(
        _ peer: ConsoleFixture.ResponsePeer, appToken: String, activity: String = "NewSurvey", number: Int, text: String
    ) async throws {
        var data = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: Conformance.labkey.appendingPathComponent(
                    "SurveyMetadata/DYNAMICSCHEMASTUDY_NewSurvey_1--RESPONSE.json"))) as? [String: Any])
        var results = try #require(data["results"] as? [[String: Any]])
        for index in results.indices {
            if results[index]["key"] as? String == "IntegerField" { results[index]["value"] = number }
            if results[index]["key"] as? String == "ShortTextField" { results[index]["value"] = text }
        }
        data["results"] = results
        let body: [String: Any] = [
            "type": "SurveyResponse", "participantId": appToken, "metadata": ["activityId": activity, "version": "1"], "data": data,
        ]
        let status = try await peer.client.execute(
            uri: "/mobileappstudy-processResponse.api", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))
        ) { $0.status }
        #expect(status == .ok)
    }

    /// Waits until every response has left `pending`; returns the statuses by id.
    static func settled(_ peer: ConsoleFixture.ResponsePeer, count: Int) async throws -> [Int64: String] {
        try await eventually("\(count) responses settled", within: .seconds(30)) { () -> [Int64: String]? in
            var statuses: [Int64: String] = [:]
            for try await (id, status, error) in try await peer.postgres.query(
                "SELECT id, status, error_message FROM responses", logger: Logger(label: "test")
            ).decode((Int64, String, String?).self) where status != "pending" || error != nil {
                statuses[id] = status
            }
            return statuses.count == count && !statuses.values.contains("pending") ? statuses : nil
        }
    }

    /// The grid's `data-key`s in the order shown.
    static func keys(_ html: String) -> [Int] {
        html.components(separatedBy: "<tr data-key=\"").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
    }

    @Test func theGridSortsFiltersPagesAndReachesChildRows() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let peer = try #require(f.response)
            try await Self.seedDesign(peer)
            let participants = [try await Self.enroll(peer), try await Self.enroll(peer), try await Self.enroll(peer)]
            for (token, (number, text)) in zip(participants, [(7, "bravo"), (3, "alpha"), (9, "charlie")]) {
                try await Self.submit(peer, appToken: token, number: number, text: text)
            }
            #expect(try await Self.settled(peer, count: 3).values.allSatisfy { $0 == "processed" })
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)

            let overview = try await f.browser.get("/studies/CONSOLE1/data")
            #expect(overview.status == .ok)
            #expect(overview.html.contains(#"aria-current="page">Response data"#))
            #expect(overview.html.contains(#"<tr data-table="NewSurvey"><th scope="row"><a href="/studies/CONSOLE1/data/tables/NewSurvey">NewSurvey</a></th><td></td><td class="number">3</td>"#))
            #expect(overview.html.contains(#"data-table="NewSurveyTextChoiceField"><th scope="row" class="child">"#))
            #expect(overview.html.contains("/studies/CONSOLE1/data/export.zip"))

            // Sorted by a number, both ways; the column's type is shown.
            let up = try await f.browser.get("/studies/CONSOLE1/data/tables/NewSurvey?sort=IntegerField")
            #expect(up.status == .ok)
            #expect(up.html.contains(#"data-column="IntegerField" class="number"><a href="/studies/CONSOLE1/data/tables/NewSurvey?sort=IntegerField&amp;order=desc">IntegerField</a><span class="type">number</span>"#))
            #expect(up.html.contains(#"aria-sort="ascending" data-column="IntegerField""#))
            let ascending = Self.keys(up.html)
            try #require(ascending.count == 3)
            #expect(ascending == [2, 1, 3])
            let down = try await f.browser.get("/studies/CONSOLE1/data/tables/NewSurvey?sort=IntegerField&order=desc")
            #expect(Self.keys(down.html) == [3, 1, 2])
            #expect(up.html.contains("<span class=\"type\">date-time</span>"))

            // One participant, by the link in their cell; a day with nothing stored.
            let participant = try #require(
                up.html.components(separatedBy: "NewSurvey?participant=").dropFirst().first.map { String($0.prefix { $0.isNumber }) })
            let theirs = try await f.browser.get("/studies/CONSOLE1/data/tables/NewSurvey?participant=\(participant)")
            #expect(Self.keys(theirs.html).count == 1)
            let none = try await f.browser.get("/studies/CONSOLE1/data/tables/NewSurvey?from=2001-01-01&to=2001-01-02")
            #expect(none.html.contains("No rows match."))
            // A filter the service refuses is named, and the first page shown.
            let refused = try await f.browser.get("/studies/CONSOLE1/data/tables/NewSurvey?from=someday")
            #expect(refused.html.contains("These filters cannot be used"))
            #expect(refused.html.contains("from must be a date"))
            #expect(Self.keys(refused.html).count == 3)

            // Pages by cursor: the service's page size is the console's, so only the rows fit.
            #expect(!up.html.contains(#"rel="next""#))

            // A parent row's child rows.
            let childHref = try #require(
                up.html.components(separatedBy: "href=\"/studies/CONSOLE1/data/tables/NewSurveyTextChoiceField?parent=").dropFirst()
                    .first.map { "/studies/CONSOLE1/data/tables/NewSurveyTextChoiceField?parent=" + String($0.prefix { $0.isNumber }) })
            let children = try await f.browser.get(childHref)
            #expect(children.status == .ok)
            #expect(children.html.contains("Rows under row"))
            #expect(!Self.keys(children.html).isEmpty)
            #expect(try await f.browser.get("/studies/CONSOLE1/data/tables/NoSuchTable").status == .notFound)
        }
    }

    @Test func aParticipantsPageListsTheirResponsesFoundByTheirAppTokensHash() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let peer = try #require(f.response)
            let registration = try #require(f.registration)
            let pat = try await ConsoleParticipantTests.seed(registration)
            try await Self.seedDesign(peer)
            let patToken = try await Self.enroll(peer)
            try await Self.submit(peer, appToken: patToken, number: 4, text: "pat's")
            try await Self.submit(peer, appToken: try await Self.enroll(peer), number: 6, text: "someone else's")
            _ = try await Self.settled(peer, count: 2)
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let before = try await f.browser.get("/studies/CONSOLE1/participants/\(pat)")
            #expect(before.html.contains("None linked"))

            // Pat's app reports the participant id it was given (registration keeps its hash).
            try await registration.postgres.query(
                """
                UPDATE participant_studies SET participant_token_hash = \(SecureToken.hash(patToken))
                WHERE pseudonym = \(UUID(uuidString: pat)!)
                """, logger: Logger(label: "test"))
            // Linked, the page is at Pat's number: the address by registration's id leads there.
            let moved = try await f.browser.get("/studies/CONSOLE1/participants/\(pat)")
            #expect(moved.status == .seeOther)
            let page = try await f.browser.get(try #require(moved.location))
            #expect(page.status == .ok)
            let rows = page.html.components(separatedBy: #"<tr data-response=""#).dropFirst()
            #expect(rows.count == 1)
            #expect(rows.first?.contains("<code>NewSurvey</code>") == true)
            #expect(rows.first?.contains("<td>Stored</td>") == true, "its status in words")
            let href = try #require(
                rows.first?.components(separatedBy: #"<a href=""#).dropFirst().first.map { String($0.prefix { $0 != "\"" }) })
            let theirRows = try await f.browser.get(href.replacingOccurrences(of: "&amp;", with: "&"))
            #expect(Self.keys(theirRows.html).count == 1)
            #expect(theirRows.html.contains("<td>pat&#39;s</td>"))

            // One identity: the list, the page and the grid name Pat by the data's number, and
            // the number in the grid opens Pat's page.
            let number = try #require(
                try await peer.postgres.query(
                    "SELECT number FROM participants WHERE app_token_hash = \(SecureToken.hash(patToken))", logger: Logger(label: "test")
                ).decode(Int64.self).collect().first)
            #expect(page.html.contains("<h1 id=\"participant-title\">Participant \(number)</h1>"))
            let list = try await f.browser.get("/studies/CONSOLE1/participants")
            #expect(list.html.contains(">Participant \(number)</a>"))
            let searched = try await f.browser.get("/studies/CONSOLE1/participants?q=\(number)")
            #expect(searched.html.components(separatedBy: "<tr data-participant=").count == 2, "the number finds Pat alone")
            #expect(searched.html.contains(#"data-participant="\#(pat)""#))
            let unknown = try await f.browser.get("/studies/CONSOLE1/participants?q=99999")
            #expect(unknown.html.contains("No participants match."))
            // Numbered in the study from 1: Pat enrolled first.
            #expect(number == 1)
            #expect(theirRows.html.contains(#"href="/studies/CONSOLE1/participants/\#(number)""#))
            // The number's cell: their page, and beside it their rows alone (drawn in code, escaped as a template would).
            #expect(theirRows.html.contains(
                #"<a href="/studies/CONSOLE1/participants/\#(number)" title="Participant \#(number)&#39;s page">\#(number)</a> <a href="/studies/CONSOLE1/data/tables/NewSurvey?participant=\#(number)" class="row-filter" title="Only participant \#(number)&#39;s rows" aria-label="Only participant \#(number)&#39;s rows">rows</a></td>"#))
            // The number is the page's address; the old addresses lead there.
            let opened = try await f.browser.get("/studies/CONSOLE1/participants/\(number)")
            #expect(opened.status == .ok)
            #expect(opened.html.contains("<h1 id=\"participant-title\">Participant \(number)</h1>"))
            let byId = try await f.browser.get("/studies/CONSOLE1/participants/\(pat)?timeline=2026-03-02")
            #expect(byId.status == .seeOther)
            #expect(byId.location == "/studies/CONSOLE1/participants/\(number)?timeline=2026-03-02")
            let old = try await f.browser.get("/studies/CONSOLE1/participants/number/\(number)")
            #expect(old.status == .seeOther)
            #expect(old.location == "/studies/CONSOLE1/participants/\(number)")
            #expect(list.html.contains(#"<a href="/studies/CONSOLE1/participants/\#(number)">Participant \#(number)</a>"#))
            // Someone else's number has no account linked: said so; a number that is not one is refused.
            let other = try await f.browser.get("/studies/CONSOLE1/participants/\(number + 1)")
            #expect(other.status == .notFound)
            #expect(try await f.browser.get("/studies/CONSOLE1/participants/number/x").status == .badRequest)
            #expect(try await f.browser.get("/studies/CONSOLE1/participants/number/0").status == .badRequest)
        }
    }

    @Test func aParticipantsPageStandsWhenTheResponseServiceDoesNotAnswer() async throws {
        try await ConsoleFixture.run(withPeers: true, responseUnreachable: true) { f in
            let registration = try #require(f.registration)
            let pat = try await ConsoleParticipantTests.seed(registration)
            try await registration.postgres.query(
                "UPDATE participant_studies SET participant_token_hash = \(SecureToken.hash("some app token"))",
                logger: Logger(label: "test"))
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await f.browser.get("/studies/CONSOLE1/participants/\(pat)")
            #expect(page.status == .ok)
            #expect(page.html.contains("pat@participants.test"), "registration's part of the page is there")
            #expect(page.html.contains(#"id="responses-unavailable""#))
            #expect(page.html.contains("Participant (number unavailable)"), "not taken for someone not enrolled")
            let list = try await f.browser.get("/studies/CONSOLE1/participants")
            #expect(list.html.contains("participant numbers are not shown"))
            #expect(list.html.contains(">Participant (number unavailable)</a>"))
            // A number searched for cannot be looked up: the page says so instead of "no one".
            let searched = try await f.browser.get("/studies/CONSOLE1/participants?q=1")
            #expect(searched.status == .ok)
            #expect(searched.html.contains(#"id="number-search-failed""#))
            // A page that is all the response service's names the service that does not answer.
            let processing = try await f.browser.get("/studies/CONSOLE1/processing")
            #expect(processing.status == .badGateway)
            #expect(processing.html.contains("The response service is not answering"), "\(processing.html)")
        }
    }

    @Test func aFailedResponseIsListedWithItsErrorAndReprocessedOnceItsDesignIsThere() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let peer = try #require(f.response)
            let token = try await Self.enroll(peer)
            // Study-metadata has no activity "Later": the design cannot be had, the response fails.
            try await Self.submit(peer, appToken: token, activity: "Later", number: 1, text: "first")
            #expect(try await Self.settled(peer, count: 1).values.first == "error")
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)

            // The data page has no table for it (nothing was stored), but says it failed and links
            // to that activity's failed responses.
            let data = try await f.browser.get("/studies/CONSOLE1/data")
            #expect(data.html.contains(#"id="failed-responses""#))
            #expect(data.html.contains(#"<a href="/studies/CONSOLE1/processing?activity=Later"><code>Later</code>: 1 response</a>"#), "\(data.html)")
            let only = try await f.browser.get("/studies/CONSOLE1/processing?activity=Later")
            #expect(only.html.contains(#"id="failed-filter""#) && only.html.contains(#"<tr data-response=""#))
            let other = try await f.browser.get("/studies/CONSOLE1/processing?activity=Sooner")
            #expect(!other.html.contains(#"<tr data-response=""#) && other.html.contains("No response has failed processing."))

            let page = try await f.browser.get("/studies/CONSOLE1/processing")
            #expect(page.status == .ok)
            #expect(page.html.contains("No published design of activity &#39;Later&#39; at version &#39;1&#39; in study CONSOLE1"))
            #expect(!page.html.contains("/internal/"), "no internal address in what researchers read")
            let id = try #require(page.html.components(separatedBy: #"<tr data-response=""#).dropFirst().first.map { String($0.prefix { $0.isNumber }) })
            let csrf = try #require(page.input("csrf"))
            let nothingChosen = try await f.browser.post("/studies/CONSOLE1/processing/reprocess", [("csrf", csrf)])
            #expect(nothingChosen.status == .unprocessableContent)
            #expect(nothingChosen.html.contains("Choose the responses to reprocess."))
            // Against a version the activity does not have: refused with why, what was typed kept.
            let noVersion = try await f.browser.post(
                "/studies/CONSOLE1/processing/reprocess", [("csrf", csrf), ("id", id), ("againstVersion", "2")])
            #expect(noVersion.status == .unprocessableContent)
            #expect(
                noVersion.html.contains("Activity Later at version 2: No published design of activity &#39;Later&#39; at version &#39;2&#39;"),
                "\(noVersion.html)")
            #expect(noVersion.html.contains(#"id="againstVersion" name="againstVersion" value="2""#))
            #expect(try await Self.settled(peer, count: 1).values.first == "error", "nothing changed")

            // The design becomes available (as when the team publishes the activity), then the
            // console sends the response back to the queue.
            try await Self.seedDesign(peer, activity: "Later")
            let done = try await f.browser.post("/studies/CONSOLE1/processing/reprocess", [("csrf", csrf), ("id", id)])
            #expect(done.status == .seeOther)
            #expect(done.location == "/studies/CONSOLE1/processing?done=reprocessed&count=1")
            #expect(try await f.browser.get(try #require(done.location)).html.contains("1 responses went back to the queue"))
            #expect(try await Self.settled(peer, count: 1).values.first == "processed")
            #expect(try await f.browser.get("/studies/CONSOLE1/processing").html.contains("No response has failed processing."))
            #expect(!(try await f.browser.get("/studies/CONSOLE1/data").html.contains(#"id="failed-responses""#)))
            let grid = try await f.browser.get("/studies/CONSOLE1/data/tables/Later")
            #expect(Self.keys(grid.html).count == 1)
            #expect(grid.html.contains("<td>first</td>"))
        }
    }

    @Test func forwardingIsSetAndAPropertyFileIsRefusedLineByLine() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await f.browser.get("/studies/CONSOLE1/processing")
            #expect(page.html.contains(#"<dt>Now</dt><dd>off</dd>"#))
            let csrf = try #require(page.input("csrf"))

            // Refused: not https, and each problem in the service's words; nothing saved.
            let refused = try await f.browser.post(
                "/studies/CONSOLE1/processing/forwarding",
                [("csrf", csrf), ("type", "basic"), ("url", "ftp://example.org/in"), ("username", ""), ("password", "")])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.html.contains("Forwarding endpoint URL is malformed"))
            #expect(refused.html.contains("Field cannot be blank."))
            #expect(refused.html.contains(#"value="ftp://example.org/in""#), "what was typed is kept")
            let saved = try await f.browser.post(
                "/studies/CONSOLE1/processing/forwarding",
                [("csrf", csrf), ("type", "basic"), ("url", "https://example.org/in"), ("username", "team"), ("password", "s3cret-pass")])
            #expect(saved.status == .seeOther)
            let after = try await f.browser.get(try #require(saved.location))
            #expect(after.html.contains("The forwarding settings are saved."))
            #expect(after.html.contains(#"<dt>Now</dt><dd>on</dd>"#))
            #expect(after.html.contains(#"value="https://example.org/in""#))
            #expect(!after.html.contains("s3cret-pass"))
            #expect(after.html.contains("kept unless you type a new one"))

            // A file with bad lines among good ones is refused whole, each bad line named by the line
            // a spreadsheet shows (the blank line 3 still counts).
            let peer = try #require(f.response)
            #expect(
                try await ConsoleFixture.announce(
                    "CONSOLE1", to: peer.client, version: 100,
                    properties: [ParticipantProperty(key: "group", timing: .preEnrollment, dataType: .string)]) == .ok)
            let upload = try await f.browser.post(
                "/studies/CONSOLE1/processing/properties", [("csrf", csrf)],
                files: [("csvFile", "props.csv", Array("token,group\nAAAAAAAAA,A\n\nBBBBBBBBB,B\n".utf8))])
            #expect(upload.status == .unprocessableContent)
            #expect(upload.html.contains("Line 2, token: Unknown token: &#39;AAAAAAAAA&#39;"), "\(upload.html)")
            #expect(upload.html.contains("Line 4, token: Invalid token: &#39;BBBBBBBBB&#39;"))
            #expect(!upload.html.contains("Line 3"))
            let empty = try await f.browser.post("/studies/CONSOLE1/processing/properties", [("csrf", csrf), ("csv", " ")])
            #expect(empty.html.contains("Choose a CSV file or paste its lines."))
        }
    }

    @Test func aViewerReadsTheDataButCannotReprocessForwardUploadOrExport() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let peer = try #require(f.response)
            try await Self.seedDesign(peer)
            try await Self.submit(peer, appToken: try await Self.enroll(peer), number: 5, text: "only")
            _ = try await Self.settled(peer, count: 1)
            let password = try await f.makeAdmin("viewer@console.test", role: "viewer")
            let viewer = Browser(client: f.browser.client)
            try await viewer.signIn("viewer@console.test", password)

            let overview = try await viewer.get("/studies/CONSOLE1/data")
            #expect(overview.status == .ok)
            #expect(!overview.html.contains("export.zip"))
            #expect(Self.keys(try await viewer.get("/studies/CONSOLE1/data/tables/NewSurvey").html).count == 1)
            let export = try await viewer.get("/studies/CONSOLE1/data/export.zip")
            #expect(export.status == .forbidden)
            let processing = try await viewer.get("/studies/CONSOLE1/processing")
            #expect(processing.status == .ok)
            #expect(!processing.html.contains("forwarding-form"))
            #expect(!processing.html.contains("properties-form"))
            let csrf = try #require(processing.input("csrf"))
            #expect(try await viewer.post("/studies/CONSOLE1/processing/reprocess", [("csrf", csrf), ("id", "1")]).status == .forbidden)
            #expect(
                try await viewer.post(
                    "/studies/CONSOLE1/processing/forwarding", [("csrf", csrf), ("type", "disabled")]
                ).status == .forbidden)
        }
    }
}
