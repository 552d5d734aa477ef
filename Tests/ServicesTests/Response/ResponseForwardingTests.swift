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
    let forwarding = ForwardingFixture()

    @Test(.needsCluster) func basicForwardingSendsEachResponseOnceWithItsTokenAndData() async throws {
        try await ForwardingTargetServer.run(auth: .basic(user: "forwarder", password: "s3cret-pass")) { target, port in
            try await ResponseHarness.run(overrides: ForwardingFixture.localTargets) { h in
                let (appToken, enrollmentToken) = try await forwarding.enroll(h)
                try await forwarding.store(h).save(
                    .basic(url: URL(string: "http://127.0.0.1:\(port)/forward")!, username: "forwarder", password: "s3cret-pass"),
                    studyKey: ForwardingFixture.study, actor: "test")
                let processing = ProcessingFixture()
                let id = try await processing.submit(h, appToken: appToken, activity: "NewSurvey", version: "1")
                #expect(try await forwarding.forwarded(h, id) == 0)

                let deliveries = await target.deliveries
                #expect(deliveries.count == 1)
                let body = try #require(deliveries.first?.body)
                #expect(deliveries.first?.responseId == String(id))
                #expect(body["type"] == .string("SurveyResponse"))
                #expect(body["metadata"]?["activityid"] == .string("NewSurvey"))
                #expect(body["metadata"]?["version"] == .string("1"))
                #expect(body["token"] == .string(enrollmentToken))
                let submitted = try JSONDecoder().decode(
                    JSONValue.self, from: Data(contentsOf: ProcessingFixture.file("NewSurvey", "1", response: true)))
                #expect(body["data"] == submitted)

                // Nothing is sent again: a forwarded response is not among what a worker can
                // claim (checked at the queue, not by waiting and seeing nothing happen).
                #expect(try await forwarding.store(h).lease(limit: 100, for: .seconds(1)).isEmpty)
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

    @Test(.needsCluster) func oauthFetchesATokenAndFetchesAgainOnceWhenItIsRefused() async throws {
        try await ForwardingTargetServer.run(auth: .oauth) { target, port in
            try await ResponseHarness.run(overrides: ForwardingFixture.localTargets) { h in
                let (appToken, _) = try await forwarding.enroll(h)
                try await forwarding.store(h).save(
                    .oauth(
                        tokenRequestURL: URL(string: "http://127.0.0.1:\(port)/token")!, tokenField: "access_token",
                        header: "X-Auth", url: URL(string: "http://127.0.0.1:\(port)/forward")!),
                    studyKey: ForwardingFixture.study, actor: "test")
                let processing = ProcessingFixture()
                let first = try await processing.submit(h, appToken: appToken, activity: "NewSurvey", version: "1")
                #expect(try await forwarding.forwarded(h, first) == 0)
                #expect(await target.tokenRequests == 1)

                // The target now wants another token: the cached one gets a 401, a new one is
                // fetched and the same attempt succeeds (the original gave up here).
                await target.rotateToken("token-2")
                let second = try await processing.submit(h, appToken: appToken, activity: "NewSurvey", version: "2")
                #expect(try await forwarding.forwarded(h, second) == 0)
                #expect(await target.tokenRequests == 2)
                #expect(await target.deliveries.map(\.responseId) == [String(first), String(second)])
            }
        }
    }

    @Test(.needsCluster) func aFailingTargetIsRetriedUntilItAcceptsAndOnly2xxCounts() async throws {
        try await ForwardingTargetServer.run(auth: .basic(user: "u", password: "p")) { target, port in
            try await ResponseHarness.run(overrides: ForwardingFixture.localTargets) { h in
                let (appToken, _) = try await forwarding.enroll(h)
                // 300 was success to the original; here it is a failure, as is a 503 while down.
                await target.failNext([.multipleChoices, .serviceUnavailable])
                try await forwarding.store(h).save(
                    .basic(url: URL(string: "http://127.0.0.1:\(port)/forward")!, username: "u", password: "p"),
                    studyKey: ForwardingFixture.study, actor: "test")
                let id = try await ProcessingFixture().submit(h, appToken: appToken, activity: "NewSurvey", version: "1")

                // While it fails, the admin API's status says so.
                let status = try await eventually("the forwarding status showing a failure", within: .seconds(20)) {
                    try await forwarding.store(h).status(studyKey: ForwardingFixture.study)
                } until: { $0.failing > 0 }
                #expect(status.failing == 1 && status.waiting == 1)
                #expect(status.lastError?.contains("answered 300") == true, "\(status)")

                #expect(try await forwarding.forwarded(h, id) == 2)
                #expect(await target.attempts == 3)
                #expect(await target.deliveries.count == 1)
                let after = try await forwarding.store(h).status(studyKey: ForwardingFixture.study)
                #expect(after.forwarded == 1 && after.waiting == 0 && after.lastError == nil)
            }
        }
    }

    @Test(.needsCluster) func twoReplicasDeliverEachResponseExactlyOnce() async throws {
        try await ForwardingTargetServer.run(auth: .basic(user: "u", password: "p")) { target, port in
            try await ResponseHarness.run(overrides: ForwardingFixture.localTargets) { h in
                let reader = TestConfiguration.reader(
                    for: .response, databaseURL: h.databaseURL,
                    overrides: ["query.databaseURL": try await ResponseHarness.readerURL(h.databaseURL)].merging(ForwardingFixture.localTargets) { $1 })
                let replica = try ResponseService.buildApplication(reader: reader, logger: Logger(label: "replica"))
                try await replica.test(.router) { second in
                    try await TestApplication.waitUntilReady(second)
                    let (appToken, _) = try await forwarding.enroll(h)
                    let processing = ProcessingFixture()
                    _ = try await processing.submit(h, appToken: appToken, activity: "NewSurvey", version: "1")
                    let data = try JSONSerialization.jsonObject(
                        with: Data(contentsOf: ProcessingFixture.file("NewSurvey", "1", response: true)))
                    for run in 2...20 {
                        let (status, _, _) = try await h.call(
                            "mobileappstudy-processResponse.api",
                            json: ["type": "SurveyResponse", "participantId": appToken,
                                   "metadata": ["activityId": "NewSurvey", "version": "1", "activityRunId": "\(run)"],
                                   "data": data])
                        #expect(status == .ok)
                    }
                    // Both replicas process and forward from the same queue.
                    try await forwarding.store(h).save(
                        .basic(url: URL(string: "http://127.0.0.1:\(port)/forward")!, username: "u", password: "p"),
                        studyKey: ForwardingFixture.study, actor: "test")
                    var ids: [Int64] = []
                    for try await id in try await h.postgres.query(
                        "SELECT id FROM responses ORDER BY id", logger: Logger(label: "test")
                    ).decode(Int64.self) { ids.append(id) }
                    #expect(ids.count == 20)
                    for id in ids { _ = try await forwarding.forwarded(h, id) }
                    let delivered = await target.deliveries.map(\.responseId)
                    #expect(delivered.count == 20)
                    #expect(Set(delivered) == Set(ids.map(String.init)))
                }
            }
        }
    }
}
