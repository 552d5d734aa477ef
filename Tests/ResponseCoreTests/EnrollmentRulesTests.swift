import Foundation
import InMemoryPorts
import JSONText
import ResponseCore
import StudyModels
import Testing

/// `Enrollment` (the apps' `enroll`, `validateEnrollmentToken`, `resolveEnrollmentToken`) against
/// in-memory studies and tokens: the original's checks in its order and words, the ones StudyStack
/// adds (a study not running, tokens withdrawn, expired or for testing), and that a refusal
/// enrols nobody.
@Suite struct EnrollmentRulesTests {
    static func token(_ prefix: String) -> String { prefix + String(EnrollmentToken.checkLetter(for: prefix)!) }
    static let fresh = token("ABCDEFGH"), used = token("BCDEFGHI"), revoked = token("CDEFGHIJ")
    static let expired = token("DEFGHIJK"), tester = token("EFGHIJKL"), elsewhere = token("FGHIJKLM")

    static func world(status: StudyEvent.Status = .active) -> InMemoryEnrollment {
        let world = InMemoryEnrollment()
        world.add(StudyCatalog.Study(studyId: "Sleep", key: "SLEEP", appId: "APP", status: status, version: 1, collectionEnabled: true))
        world.add(StudyCatalog.Study(studyId: "Other", key: "OTHER", appId: "APP", status: .active, version: 1, collectionEnabled: true))
        func state(
            _ study: String = "SLEEP", used: Bool = false, revoked: Bool = false, expired: Bool = false, testing: Bool = false
        ) -> EnrollmentStore.TokenState {
            .init(studyKey: study, used: used, revoked: revoked, expired: expired, forTesting: testing)
        }
        world.add(token: fresh, state(), properties: [PreEnrollmentProperty(propertyId: "arm", value: .string("B"))])
        world.add(token: used, state(used: true))
        world.add(token: revoked, state(revoked: true))
        world.add(token: expired, state(expired: true))
        world.add(token: tester, state(testing: true))
        world.add(token: elsewhere, state("OTHER"))
        return world
    }

    static func request(_ study: String? = "sleep", token: String?, sharing: String? = nil, language: String? = nil) -> Enrollment.Request {
        Enrollment.Request(studyId: study, token: token, allowDataSharing: sharing, language: language)
    }

    @Test func aFreshTokenEnrolsOnceWithTheSharingChoiceAndShowsItsProperties() async throws {
        let world = Self.world()
        let enrollment = Enrollment(catalog: world, participants: world)
        #expect(try await enrollment.validate(Self.request(token: " \(Self.fresh.lowercased()) "))
            == .valid(properties: [PreEnrollmentProperty(propertyId: "arm", value: .string("B"))]))
        #expect(try await enrollment.enroll(Self.request(token: Self.fresh)) == .enrolled(appToken: "app-token-1"))
        #expect(world.enrolled.count == 1)
        #expect(world.enrolled.first?.sharing == "NA", "no choice sent is NA, as the Android app sends none")
        #expect(try await enrollment.enroll(Self.request(token: Self.fresh))
            == .refused([LabKeyProblem(field: "token", message: "Token already in use")]))
        #expect(world.enrolled.count == 1)
    }

    /// Each refusal names the field in the original's words (or StudyStack's, where it adds a
    /// check), and enrols nobody.
    @Test(arguments: [
        (nil as String?, Self.fresh as String?, nil as String?, "studyId", "StudyId is required"),
        ("nope", Self.fresh, nil, "studyId", "Study with StudyId 'NOPE' does not exist"),
        ("sleep", nil, nil, "token", "Token is required"),
        ("sleep", Self.used, nil, "token", "Token already in use"),
        ("sleep", "ABCDEFGHA", nil, "token", "Invalid token: 'ABCDEFGHA'"),
        ("sleep", Self.elsewhere, nil, "token", "Unknown token: '\(Self.elsewhere)'"),
        ("sleep", Self.revoked, nil, "token", "Token '\(Self.revoked)' has been withdrawn by the study team"),
        ("sleep", Self.expired, nil, "token", "Token '\(Self.expired)' has expired; ask the study team to send it again"),
        ("sleep", Self.tester, nil, "token", "Token '\(Self.tester)' was for testing the study and no longer works"),
        ("sleep", Self.fresh, "maybe", "allowDataSharing", "Invalid allowDataSharing value: 'maybe'"),
    ])
    func aRefusalSaysWhyAndEnrolsNobody(study: String?, token: String?, sharing: String?, field: String, message: String) async throws {
        let world = Self.world()
        let outcome = try await Enrollment(catalog: world, participants: world).enroll(Self.request(study, token: token, sharing: sharing))
        guard case .refused(let problems) = outcome else {
            Issue.record("enrolled: \(outcome)")
            return
        }
        #expect(problems.first == LabKeyProblem(field: field, message: message))
        #expect(world.enrolled.isEmpty)
    }

    @Test func aStudyBeingTestedTakesOnlyItsTestersAndOneNotRunningTakesNobody() async throws {
        let testing = Self.world(status: .testing)
        let enrollment = Enrollment(catalog: testing, participants: testing)
        let testersOnly = Enrollment.Enrolled.refused([.init(field: "token", message: Enrollment.testersOnly)])
        #expect(try await enrollment.enroll(Self.request(token: nil)) == testersOnly)
        #expect(try await enrollment.enroll(Self.request(token: Self.fresh)) == testersOnly)
        #expect(try await enrollment.enroll(Self.request(token: Self.tester)) == .enrolled(appToken: "app-token-1"))

        let paused = Self.world(status: .paused)
        #expect(try await Enrollment(catalog: paused, participants: paused).enroll(Self.request(token: Self.fresh))
            == .refused([.init(field: "studyId", message: "Study with StudyId 'SLEEP' is not enrolling participants")]))
        #expect(paused.enrolled.isEmpty)
    }

    /// A token spent by another enrollment between the checks and the insert is refused as used.
    @Test func aTokenSpentMeanwhileIsAlreadyInUse() async throws {
        let world = Self.world()
        world.spendFirst(Self.fresh)
        #expect(try await Enrollment(catalog: world, participants: world).enroll(Self.request(token: Self.fresh))
            == .refused([LabKeyProblem(field: "token", message: "Token already in use")]))
        #expect(world.enrolled.isEmpty)
    }

    @Test func aTokenResolvesToItsStudyOrSaysWhyNot() async throws {
        let world = Self.world()
        let enrollment = Enrollment(catalog: world, participants: world)
        #expect(try await enrollment.resolve(Self.fresh) == .study(studyId: "Sleep"))
        #expect(try await enrollment.resolve("ABCDEFGHA") == .invalid(.init(field: "token", message: "Invalid token: 'ABCDEFGHA'")))
        #expect(try await enrollment.resolve(Self.token("ZZZZZZZZ")) == .unknown)
    }
}
