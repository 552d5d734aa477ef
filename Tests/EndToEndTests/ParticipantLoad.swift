import Foundation
import Synchronization
import Testing
import TestSupport

/// Steady load from simulated participants, each a MyStudies iOS app going through nginx:
/// sign up (the verification code read from the e-mail), verify, sign in, enroll with a token,
/// then rounds of activity state and survey responses, and then the next participant. Like the
/// app, a call that fails on the wire or with a 5xx is sent again, the same body, until it gets
/// an answer; a participant whose sign-up or enrollment cannot go on (the first attempt succeeded
/// unseen and the repeat is refused) is abandoned and the next one begins.
final class ParticipantLoad: Sendable {
    /// One participant who finished: what the server last acknowledged of their daily activity.
    struct Finished: Sendable {
        var app: MyStudiesApp
        var completedRuns: Int
    }

    struct Ledger {
        /// The `notes` answer of every response the server answered 200 to.
        var acknowledged: [String] = []
        var signUps: [String] = []
        var finished: [Finished] = []
        var abandoned: [String] = []
        /// Every answer that was not 2xx or 4xx (0: no answer at all), by status.
        var failures: [Int: Int] = [:]
        var calls = 0
        var nextToken = 0
        var stopped = false
    }

    static let password = "Replica-Passw0rd!"
    static let responsesPerParticipant = 3

    let platform: ReplicatedPlatform
    let dailyVersion: String
    let dailyName: String
    private let ledger = Mutex(Ledger())

    init(platform: ReplicatedPlatform, dailyVersion: String, dailyName: String) {
        self.platform = platform
        self.dailyVersion = dailyVersion
        self.dailyName = dailyName
    }

    var snapshot: Ledger { ledger.withLock { $0 } }
    func stop() { ledger.withLock { $0.stopped = true } }
    private var stopped: Bool { ledger.withLock { $0.stopped } }

    /// Waits until `count` more responses have been acknowledged than now: the load's progress,
    /// not a clock, paces the test.
    func progress(by count: Int, within timeout: Duration = .seconds(120)) async throws {
        let target = snapshot.acknowledged.count + count
        try await eventually("\(count) more responses acknowledged", within: timeout) { self.snapshot.acknowledged.count }
            until: { $0 >= target }
    }

    /// Runs `workers` participants at a time until `stop`.
    func run(workers: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var round = 0
                    while !self.stopped {
                        round += 1
                        await self.participant("w\(worker)-p\(round)")
                    }
                }
            }
        }
    }

    private func participant(_ name: String) async {
        let app = platform.app()
        let email = "replica-\(name)@example.org"
        func abandon(_ step: String, _ reply: Wire.Reply?) {
            ledger.withLock { $0.abandoned.append("\(email) at \(step): \(reply?.status ?? 0) \(reply?.text.prefix(200) ?? "")") }
        }
        guard let registered = await call({ try await app.registration("register", body: ["emailId": email, "password": Self.password]) }),
            registered.status == 200
        else { return abandon("register", nil) }
        ledger.withLock { $0.signUps.append(email) }
        app.signedIn(registered)
        // The mail worker of either registration replica sends the code; a replica killed with
        // the message claimed leaves it to its lease (45 s).
        guard
            let code = try? await eventually("the code for \(email)", within: .seconds(120), poll: .milliseconds(250), {
                try Platform.codes(in: platform.mailDirectory, to: email).last
            })
        else { return abandon("verification e-mail", nil) }
        guard let verified = await call({ try await app.registration("verify", body: ["code": code, "emailId": email]) }),
            verified.status == 200
        else { return abandon("verify", nil) }
        guard let login = await call({ try await app.registration("login", body: ["emailId": email, "password": Self.password]) }),
            login.status == 200
        else { return abandon("login", nil) }
        app.signedIn(login)
        // Push allowed, and the device's token (unique to the participant): announcements queue a
        // push for it.
        let device = String((Array(email.utf8).map { String($0, radix: 16) }.joined() + String(repeating: "0", count: 64)).prefix(64))
        let profile = await call {
            try await app.registration(
                "updateUserProfile",
                body: ["settings": ["remoteNotifications": true], "info": ["os": "ios", "appVersion": "1.0", "deviceToken": device]])
        }
        guard profile?.status == 200 else { return abandon("updateUserProfile", profile) }

        guard let token = ledger.withLock({ ledger -> String? in
            guard ledger.nextToken < platform.tokens.count else { return nil }
            defer { ledger.nextToken += 1 }
            return platform.tokens[ledger.nextToken]
        }) else { return abandon("enroll: no tokens left", nil) }
        let enrolled = await call {
            try await app.response("enroll", [("studyId", "DEMOSTUDY"), ("token", token), ("allowDataSharing", "true")])
        }
        guard enrolled?.status == 200, let participant = enrolled?.json?["data"]?["appToken"]?.string else {
            return abandon("enroll", enrolled)
        }
        let inStudy = await call {
            try await app.registration(
                "updateStudyState", body: ["studies": [["studyId": "DEMOSTUDY", "status": "inProgress", "participantId": participant]]])
        }
        guard inStudy?.status == 200 else { return abandon("updateStudyState", inStudy) }

        var completed = 0
        for run in 1...Self.responsesPerParticipant {
            guard await state("inProgress", app: app, completed: completed) else { return abandon("updateActivityState", nil) }
            let notes = "\(name)-r\(run)"
            let body = JourneyResponses.dailyResponse(participant: participant, name: dailyName, version: dailyVersion, notes: notes)
            guard let stored = await call({ try await app.processResponse(body) }), stored.status == 200 else {
                return abandon("processResponse", nil)
            }
            ledger.withLock { $0.acknowledged.append(notes) }
            completed += 1
            guard await state("completed", app: app, completed: completed) else { return abandon("updateActivityState", nil) }
        }
        ledger.withLock { $0.finished.append(Finished(app: app, completedRuns: completed)) }
    }

    /// The daily activity's state, as the app reports it around each run.
    private func state(_ activityState: String, app: MyStudiesApp, completed: Int) async -> Bool {
        let body: [String: Any] = [
            "studyId": "DEMOSTUDY",
            "activity": [["activityId": "daily", "activityRunId": "1", "activityState": activityState, "activityVersion": dailyVersion,
                          "activityRun": ["total": 100, "completed": completed, "missed": 0]]],
        ]
        return await call({ try await app.registration("updateActivityState", body: body) })?.status == 200
    }

    /// Sends until the answer is neither a wire error nor a 5xx, at most for a minute, as the app
    /// retries; every failed attempt is counted.
    private func call(_ send: () async throws -> Wire.Reply) async -> Wire.Reply? {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let reply = try? await send()
            ledger.withLock { $0.calls += 1 }
            if let reply, reply.status < 500 { return reply }
            ledger.withLock { $0.failures[reply?.status ?? 0, default: 0] += 1 }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return nil
    }
}
