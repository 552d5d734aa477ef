import Foundation
import InMemoryPorts
import JSONText
import ResponseCore
import Testing

/// `ResearcherQueries` (LabKey's `selectRows` and `executeSql` for researchers) against in-memory
/// lists and a sandbox that records what it is given: the schema found in any case, the query
/// translated and run with the study's scope and the caller's slots, the call's paging applied,
/// and every refusal in LabKey's words with nothing run.
@Suite struct ResearcherQueryRulesTests {
    static let study = StudyCatalog.Study(
        studyId: "Sleep", key: "SLEEP", appId: "APP", status: .active, version: 1, collectionEnabled: true)
    static let caller = UUID()
    static let table = QueryTranslator.Catalog.Table(
        name: "diary", sqlName: "diary",
        columns: [
            .init(name: "Key", sqlName: "Key", storage: "INTEGER", system: true),
            .init(name: "ParticipantId", sqlName: "ParticipantId", storage: "INTEGER", system: true),
            .init(name: "hours", sqlName: "hours", storage: "DOUBLE"),
        ])

    static func world(sandbox: Bool = true) -> (InMemoryQueries, ResearcherQueries) {
        let world = InMemoryQueries()
        world.add(QueryTranslator.Catalog(schema: "study_sleep", tables: ["diary": table], order: ["diary"]), studyKey: "SLEEP")
        world.answer([[.number(1), .number(7), .number(6.5)]])
        return (world, ResearcherQueries(lists: world, sandbox: sandbox ? world : nil))
    }

    @Test func aTableIsReadWithTheStudysScopeAndItsTotal() async throws {
        let (world, queries) = Self.world()
        let answer = try await queries.select(
            .init(schemaName: "LISTS", queryName: "Diary", parameters: [:], countTotal: true), on: Self.study, caller: Self.caller)
        #expect(answer.schemaName == "lists")
        #expect(answer.queryName == "diary")
        #expect(answer.key == "Key")
        #expect(answer.result.rows.count == 1)
        #expect(world.ran.count == 1)
        #expect(world.ran.first?.scope == .study(key: "SLEEP", caller: Self.caller))
        #expect(world.ran.first?.countTotal == true)
        #expect(world.ran.first?.sql.contains("study_sleep") == true, "\(world.ran.first?.sql ?? "")")
    }

    /// The total is a count of its own, of the rows unsorted and unpaged, and never a window
    /// beside the page's rows: PostgreSQL plans a window under a LIMIT as if the limit could stop
    /// it early, and read whole tables in key order for it.
    @Test func aPagesTotalIsCountedApartFromItsRows() throws {
        let catalog = QueryTranslator.Catalog(schema: "study_sleep", tables: ["diary": Self.table], order: ["diary"])
        let request = try SelectRowsRequest(
            parameters: ["query.queryName": "diary", "query.hours~gte": "6", "query.sort": "-Key", "query.maxRows": "100",
                "query.offset": "200"],
            catalog: catalog)
        let translator = QueryTranslator(schemas: ["lists": catalog], defaultSchema: "lists", maxRows: 1_000)
        let page = try translator.translate(request.statement, countTotal: true)
        #expect(!page.sql.contains("OVER"), "\(page.sql)")
        #expect(page.sql.hasSuffix("ORDER BY \"c1\" DESC LIMIT 100 OFFSET 200"), "\(page.sql)")
        #expect(page.readLimit == 100 && page.offset == 200 && page.cappedAt == nil)
        let count = try #require(page.countSQL)
        #expect(count.hasPrefix("SELECT count(*) FROM (SELECT "), "\(count)")
        #expect(count.contains("WHERE (\"t1\".\"hours\" >= '6')"), "\(count)")
        for clause in ["ORDER BY", "LIMIT", "OFFSET", "OVER"] { #expect(!count.contains(clause), "\(clause): \(count)") }
        // Without the total, and within the row limit, nothing is counted.
        #expect(try translator.translate(request.statement).countSQL == nil)
    }

    @Test func sqlIsRunWithTheCallsPagingOnTopOfItsOwn() async throws {
        let (world, queries) = Self.world()
        _ = try await queries.execute(
            .init(schemaName: "lists", sql: "SELECT hours FROM diary", maxRows: "5", offset: "10", sort: "-hours"),
            on: Self.study, caller: Self.caller)
        #expect(world.ran.count == 1)
        let sql = world.ran.first?.sql ?? ""
        #expect(sql.contains("LIMIT 5"), "\(sql)")
        #expect(sql.contains("OFFSET 10"), "\(sql)")
        #expect(sql.contains("DESC"), "\(sql)")
        #expect(world.ran.first?.scope == .study(key: "SLEEP", caller: Self.caller))
    }

    /// Each refusal is LabKey's, and nothing reaches the sandbox.
    @Test func aRefusedQueryRunsNothing() async throws {
        let (world, queries) = Self.world()
        func refusal(_ run: () async throws -> ResearcherQueries.Answer) async -> ResearcherQueries.Refusal? {
            do {
                _ = try await run()
                return nil
            } catch let refusal as ResearcherQueries.Refusal {
                return refusal
            } catch {
                return nil
            }
        }
        func select(_ schema: String?, _ query: String?) async -> ResearcherQueries.Refusal? {
            await refusal {
                try await queries.select(
                    .init(schemaName: schema, queryName: query, parameters: [:], countTotal: true), on: Self.study, caller: Self.caller)
            }
        }
        #expect(await select(nil, "diary") == .invalid(ResearcherQueries.required("schemaName")))
        #expect(await select("core", "diary") == .noSchema("core"))
        #expect(await select("lists", nil) == .invalid(ResearcherQueries.required("queryName")))
        #expect(await select("lists", "nap") == .noQuery("nap", schema: "lists"))
        let unparsed = await refusal {
            try await queries.execute(
                .init(schemaName: "lists", sql: "DROP TABLE diary", maxRows: nil, offset: nil, sort: nil), on: Self.study, caller: Self.caller)
        }
        guard case .invalid(let problem)? = unparsed else {
            Issue.record("a statement that is not a SELECT was not refused: \(String(describing: unparsed))")
            return
        }
        #expect(problem.field == "sql")
        let badPaging = await refusal {
            try await queries.execute(
                .init(schemaName: "lists", sql: "SELECT hours FROM diary", maxRows: "1e9", offset: nil, sort: nil), on: Self.study,
                caller: Self.caller)
        }
        // (-1 is LabKey's "every row", and taken.)
        #expect(badPaging == .invalid(LabKeyProblem(field: "sql", message: "maxRows must be a whole number from 0 to 1000000000")))
        #expect(world.ran.isEmpty)

        let (_, unconfigured) = Self.world(sandbox: false)
        let unavailable = await refusal {
            try await unconfigured.select(
                .init(schemaName: "lists", queryName: "diary", parameters: [:], countTotal: true), on: Self.study, caller: Self.caller)
        }
        #expect(unavailable == .unavailable)
        #expect(try await unconfigured.catalogs(of: Self.study)["lists"]?.table("diary") != nil, "the listings answer without a sandbox")
    }
}
