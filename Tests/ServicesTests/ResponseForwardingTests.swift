import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// Forwarding against a local target: Basic and OAuth, a target
/// that fails and comes back, and one delivery per response with two replicas sending.
@Suite struct ResponseForwardingTests {
    static let study = ResponseProcessingTests.study
    /// The targets here listen on 127.0.0.1, which only an operator's setting opens.
    static let localTargets = ["forwarding.allowPrivateTargets": "true"]

    func store(_ h: ResponseHarness) -> ForwardingStore { Self.store(on: h.postgres) }

    /// The forwarding store over `postgres`, with the tests' encryption key.
    static func store(on postgres: PostgresClient) -> ForwardingStore {
        let logger = Logger(label: "test")
        return ForwardingStore(
            client: postgres, encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!,
            audit: AuditLog(client: postgres, logger: logger), logger: logger)
    }

    /// Enrolls with a fresh token; returns the app token and the enrollment token.
    func enroll(_ h: ResponseHarness) async throws -> (String, String) {
        try await h.studyEvent(Self.study)
        let token = try #require(try await h.tokens(1, study: Self.study).first)
        let (_, enrolled, _) = try await h.call(
            "mobileappstudy-enroll.api", json: ["studyId": Self.study, "token": token, "allowDataSharing": "true"])
        return (try #require(enrolled["data"]?["appToken"]?.text), token)
    }

    /// Waits until response `id` is forwarded; returns its forwarding attempts before success.
    func forwarded(_ h: ResponseHarness, _ id: Int64, within limit: Duration = .seconds(40)) async throws -> Int {
        try await eventually("response \(id) forwarded", within: limit) { () -> Int? in
            for try await (status, attempts) in try await h.postgres.query(
                "SELECT status, forward_attempts FROM responses WHERE id = \(id)", logger: Logger(label: "test")
            ).decode((String, Int).self) where status == "forwarded" { return attempts }
            return nil
        }
    }

    @Test func basicForwardingSendsEachResponseOnceWithItsTokenAndData() async throws {
        try await ForwardingTargetServer.run(auth: .basic(user: "forwarder", password: "s3cret-pass")) { target, port in
            try await ResponseHarness.run(overrides: Self.localTargets) { h in
                let (appToken, enrollmentToken) = try await enroll(h)
                try await store(h).save(
                    .basic(url: URL(string: "http://127.0.0.1:\(port)/forward")!, username: "forwarder", password: "s3cret-pass"),
                    studyKey: Self.study, actor: "test")
                let processing = ResponseProcessingTests()
                let id = try await processing.submit(h, appToken: appToken, activity: "NewSurvey", version: "1")
                #expect(try await forwarded(h, id) == 0)

                let deliveries = await target.deliveries
                #expect(deliveries.count == 1)
                let body = try #require(deliveries.first?.body)
                #expect(deliveries.first?.responseId == String(id))
                #expect(body["type"] == .string("SurveyResponse"))
                #expect(body["metadata"]?["activityid"] == .string("NewSurvey"))
                #expect(body["metadata"]?["version"] == .string("1"))
                #expect(body["token"] == .string(enrollmentToken))
                let submitted = try JSONDecoder().decode(
                    JSONValue.self, from: Data(contentsOf: ResponseProcessingTests.file("NewSurvey", "1", response: true)))
                #expect(body["data"] == submitted)

                // Nothing is sent again: a forwarded response is not among what a worker can
                // claim (checked at the queue, not by waiting and seeing nothing happen).
                #expect(try await store(h).lease(limit: 100, for: .seconds(1)).isEmpty)
                #expect(await target.deliveries.count == 1)
                // The password is not stored in clear.
                var positions: [Int] = []
                for try await clear in try await h.postgres.query(
                    "SELECT position('s3cret-pass'::bytea in sealed_password) FROM forwarding_settings",
                    logger: Logger(label: "test")
                ).decode(Int.self) { positions.append(clear) }
                #expect(positions == [0])
            }
        }
    }

    @Test func oauthFetchesATokenAndFetchesAgainOnceWhenItIsRefused() async throws {
        try await ForwardingTargetServer.run(auth: .oauth) { target, port in
            try await ResponseHarness.run(overrides: Self.localTargets) { h in
                let (appToken, _) = try await enroll(h)
                try await store(h).save(
                    .oauth(
                        tokenRequestURL: URL(string: "http://127.0.0.1:\(port)/token")!, tokenField: "access_token",
                        header: "X-Auth", url: URL(string: "http://127.0.0.1:\(port)/forward")!),
                    studyKey: Self.study, actor: "test")
                let processing = ResponseProcessingTests()
                let first = try await processing.submit(h, appToken: appToken, activity: "NewSurvey", version: "1")
                #expect(try await forwarded(h, first) == 0)
                #expect(await target.tokenRequests == 1)

                // The target now wants another token: the cached one gets a 401, a new one is
                // fetched and the same attempt succeeds (the original gave up here).
                await target.rotateToken("token-2")
                let second = try await processing.submit(h, appToken: appToken, activity: "NewSurvey", version: "2")
                #expect(try await forwarded(h, second) == 0)
                #expect(await target.tokenRequests == 2)
                #expect(await target.deliveries.map(\.responseId) == [String(first), String(second)])
            }
        }
    }

    @Test func aFailingTargetIsRetriedUntilItAcceptsAndOnly2xxCounts() async throws {
        try await ForwardingTargetServer.run(auth: .basic(user: "u", password: "p")) { target, port in
            try await ResponseHarness.run(overrides: Self.localTargets) { h in
                let (appToken, _) = try await enroll(h)
                // 300 was success to the original; here it is a failure, as is a 503 while down.
                await target.failNext([.multipleChoices, .serviceUnavailable])
                try await store(h).save(
                    .basic(url: URL(string: "http://127.0.0.1:\(port)/forward")!, username: "u", password: "p"),
                    studyKey: Self.study, actor: "test")
                let id = try await ResponseProcessingTests().submit(h, appToken: appToken, activity: "NewSurvey", version: "1")

                // While it fails, the admin API's status says so.
                let deadline = ContinuousClock.now + .seconds(20)
                var status = try await store(h).status(studyKey: Self.study)
                while status.failing == 0 && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(100))
                    status = try await store(h).status(studyKey: Self.study)
                }
                #expect(status.failing == 1 && status.waiting == 1)
                #expect(status.lastError?.contains("answered 300") == true, "\(status)")

                #expect(try await forwarded(h, id) == 2)
                #expect(await target.attempts == 3)
                #expect(await target.deliveries.count == 1)
                let after = try await store(h).status(studyKey: Self.study)
                #expect(after.forwarded == 1 && after.waiting == 0 && after.lastError == nil)
            }
        }
    }

    @Test func twoReplicasDeliverEachResponseExactlyOnce() async throws {
        try await ForwardingTargetServer.run(auth: .basic(user: "u", password: "p")) { target, port in
            try await ResponseHarness.run(overrides: Self.localTargets) { h in
                let reader = TestConfiguration.reader(
                    for: .response, databaseURL: h.databaseURL,
                    overrides: ["query.databaseURL": try await ResponseHarness.readerURL(h.databaseURL)].merging(Self.localTargets) { $1 })
                let replica = try ResponseService.buildApplication(reader: reader, logger: Logger(label: "replica"))
                try await replica.test(.router) { second in
                    try await TestApplication.waitUntilReady(second)
                    let (appToken, _) = try await enroll(h)
                    let processing = ResponseProcessingTests()
                    _ = try await processing.submit(h, appToken: appToken, activity: "NewSurvey", version: "1")
                    let data = try JSONSerialization.jsonObject(
                        with: Data(contentsOf: ResponseProcessingTests.file("NewSurvey", "1", response: true)))
                    for run in 2...20 {
                        let (status, _, _) = try await h.call(
                            "mobileappstudy-processResponse.api",
                            json: ["type": "SurveyResponse", "participantId": appToken,
                                   "metadata": ["activityId": "NewSurvey", "version": "1", "activityRunId": "\(run)"],
                                   "data": data])
                        #expect(status == .ok)
                    }
                    // Both replicas process and forward from the same queue.
                    try await store(h).save(
                        .basic(url: URL(string: "http://127.0.0.1:\(port)/forward")!, username: "u", password: "p"),
                        studyKey: Self.study, actor: "test")
                    var ids: [Int64] = []
                    for try await id in try await h.postgres.query(
                        "SELECT id FROM responses ORDER BY id", logger: Logger(label: "test")
                    ).decode(Int64.self) { ids.append(id) }
                    #expect(ids.count == 20)
                    for id in ids { _ = try await forwarded(h, id) }
                    let delivered = await target.deliveries.map(\.responseId)
                    #expect(delivered.count == 20)
                    #expect(Set(delivered) == Set(ids.map(String.init)))
                }
            }
        }
    }
}
