import Foundation
import ServiceKit
import Testing
import TestSupport

/// The programs tests start end when told and are seen to end, whatever they leave behind: a
/// wait that never returns hangs `make test` instead of failing it.
@Suite struct ChildProcessTests {
    @Test func aChildThatLeavesAGrandchildBehindIsSeenToEnd() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let grandchild = folder.appendingPathComponent("grandchild.pid")
        // The grandchild holds every descriptor the child had (Foundation's Process misses the
        // exit of such a child).
        let child = try ChildProcess.spawn("/bin/sh", ["-c", "sleep 60 & echo $! > \(grandchild.path); exit 3"])
        #expect(child.wait(within: .seconds(20)) == .exited(3))
        #expect(!child.isRunning)
        if let pid = Int32(((try? String(contentsOf: grandchild, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGKILL)
        } else {
            Issue.record("the grandchild's pid was not written")
        }
    }

    @Test func aChildHasNoneOfThisProcesssDescriptorsBeyondItsStandardThree() throws {
        // A descriptor without close-on-exec, as a test server's socket or a pipe may be.
        let open = Glibc.open("/dev/null", O_RDONLY)
        #expect(open > 2)
        defer { close(open) }
        let listed = String(decoding: try ChildProcess.run("/bin/ls", ["/proc/self/fd"]), as: UTF8.self)
            .split(separator: "\n").map(String.init).sorted()
        // ls's own descriptor for the folder it lists is the fourth.
        #expect(listed == ["0", "1", "2", "3"])
    }

    @Test func aChildSpawnedFromAThreadThatBlocksSignalsStillEndsOnSIGTERM() async throws {
        // Dispatch's threads block most signals; a child inherits its spawner's mask unless told.
        let child = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                var blocked = sigset_t()
                sigfillset(&blocked)
                pthread_sigmask(SIG_BLOCK, &blocked, nil)
                continuation.resume(with: Result { try ChildProcess.spawn("/bin/sleep", ["60"]) })
                pthread_sigmask(SIG_UNBLOCK, &blocked, nil)
            }
        }
        #expect(await child.stop(grace: .seconds(10)), "sleep did not end on SIGTERM")
        #expect(child.ended == .signalled(SIGTERM))
    }

    @Test func aRunPastItsTimeoutIsKilledAndFails() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pidFile = folder.appendingPathComponent("sleeper.pid")
        let error = try #require(throws: ChildProcess.Failure.self) {
            try ChildProcess.run("/bin/sh", ["-c", "echo $$ > \(pidFile.path); exec sleep 60"], timeout: .seconds(1))
        }
        #expect(error.description.contains("did not finish within"))
        // Killed and reaped: no process has its pid any more.
        let pid = try #require(Int32(((try? String(contentsOf: pidFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }

    @Test func aFailedRunSaysHowItEndedAndWhatItComplained() throws {
        let error = try #require(throws: ChildProcess.Failure.self) {
            try ChildProcess.run("/bin/sh", ["-c", "echo cannot read the settings >&2; exit 4"])
        }
        #expect(error.description.contains("exited with 4"))
        #expect(error.description.contains("cannot read the settings"))
    }

    @Test func aRunReadsItsInputAndReturnsItsOutput() throws {
        let output = try ChildProcess.run("cat", [], input: Data("participant answers\n".utf8))
        #expect(String(decoding: output, as: UTF8.self) == "participant answers\n")
    }

    @Test func aProgramThatDoesNotExistIsAnError() {
        #expect(throws: ChildProcess.Failure.self) { try ChildProcess.spawn("/nonexistent/studystack-program", []) }
    }
}
