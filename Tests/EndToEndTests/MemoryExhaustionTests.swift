import Foundation
import StudyModels
import Testing
import TestSupport

/// The single inputs that once took a service's memory (docs/security.md, Budgets), each sent to
/// the real executables: the input is refused or cut, the service still answers, and its resident
/// memory at its highest (`VmHWM`) stays under the platform's ceiling of 512 MiB per service.
@Suite struct MemoryExhaustionTests {
    static let ceiling = 512 << 20

    /// `{"a":{"b":{"a":...}}}` nested `depth` deep, one member each, names drawn from two letters
    /// so the text still compresses well below the ZIP reader's ratio limit but not past it.
    static func nestedObjects(totalBytes: Int, depth: Int = 200) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(totalBytes + 4096)
        while out.count < totalBytes {
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            for _ in 0..<depth {
                out += [UInt8(ascii: "{"), UInt8(ascii: "\""), Bool.random(using: &generator) ? UInt8(ascii: "a") : UInt8(ascii: "b"),
                        UInt8(ascii: "\""), UInt8(ascii: ":")]
            }
            out.append(UInt8(ascii: "1"))
            out += [UInt8](repeating: UInt8(ascii: "}"), count: depth)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// Any enrolled participant (an app token is all it takes): a result archive of under 2 MiB
    /// whose `metadata.json` inflates to 46 MiB of nested one-member objects, sent once and then
    /// four at once. Each is refused for its manifest's size; the service stays under the ceiling.
    @Test func aSmallArchiveThatInflatesToAHugeManifestIsRefusedWithinMemory() async throws {
        try await Platform.run { platform in
            let app = platform.app(.ios)
            let enrolled = try await app.response(
                "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[0]), ("allowDataSharing", "true")])
            let appToken = try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)")

            let manifest = Self.nestedObjects(totalBytes: 46 << 20)
            var zip = ZipWriter()
            zip.add("metadata.json", manifest)
            zip.add("assessmentResult.json", Array(SageArchiveSamples.result(runId: UUID().uuidString).utf8))
            let archive = zip.bytes()
            #expect(archive.count < 2 << 20, "the attack is small: \(archive.count) bytes")
            #expect(manifest.count / archive.count < 200, "within the ZIP reader's ratio, so the manifest is inflated")

            let before = try platform.response.residentMemory()
            let url = platform.response.baseURL + "/sage/v1/studies/DEMOSTUDY/archives"
            let headers = [("Authorization", "Bearer \(appToken)"), ("Content-Type", "application/zip")]
            let once = try await Wire.send(.POST, url, headers: headers, raw: Data(archive))
            #expect(once.status == 422, "\(once.status) \(once.text)")
            #expect(once.text.contains("metadata.json"), "the refusal names the file: \(once.text)")
            #expect(once.text.contains("larger than 262144 bytes"), "and why: \(once.text)")

            let replies = try await withThrowingTaskGroup(of: Wire.Reply.self) { group in
                for _ in 0..<4 { group.addTask { try await Wire.send(.POST, url, headers: headers, raw: Data(archive)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.count == 4)
            for reply in replies { #expect(reply.status == 422, "\(reply.status) \(reply.text)") }
            try await CrashRequestTests.expectAlive(platform)
            let after = try platform.response.residentMemory()
            print("response service, resident MiB: before \(before.now >> 20) (peak \(before.peak >> 20)), after \(after.now >> 20), peak \(after.peak >> 20)")
            #expect(after.peak < Self.ceiling, "peak \(after.peak >> 20) MiB, from \(before.now >> 20) MiB before")
        }
    }
}
