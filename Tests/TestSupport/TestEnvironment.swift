import Foundation
import Testing

/// What a test needs from the machine beyond the Swift toolchain, as traits that skip it, with the
/// reason named, when that is not there. `make test` prepares all of it (a throwaway PostgreSQL
/// cluster, the tools' Python environment, Debian's programs), so there nothing is skipped; a plain
/// `swift test` on a fresh clone runs what needs nothing (`make check`) and lists the rest as
/// skipped with why.
public enum TestEnvironment {
    /// Whether `make test`'s throwaway cluster is there (`STUDYSTACK_TEST_DATABASE_URL`).
    public static var hasCluster: Bool {
        !(ProcessInfo.processInfo.environment[TestDatabase.environmentVariable] ?? "").isEmpty
    }

    /// The Python of the tools' environment that `make test` prepares (`.build/tools-venv`), or
    /// the one `STUDYSTACK_TEST_PYTHON` names.
    public static var toolsPython: String {
        ProcessInfo.processInfo.environment["STUDYSTACK_TEST_PYTHON"]
            ?? ServiceProcess.packageRoot.appendingPathComponent(".build/tools-venv/bin/python").path
    }

    /// Whether every one of `programs` is an executable on `PATH`.
    public static func hasPrograms(_ programs: [String]) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init)
        return programs.allSatisfy { program in
            directories.contains { FileManager.default.isExecutableFile(atPath: $0 + "/" + program) }
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// The test (or every test of the suite) reads or writes PostgreSQL, starts the services, or
    /// needs what `make test` sets up beside the cluster; without the cluster it is skipped.
    public static var needsCluster: Self {
        .enabled(
            if: TestEnvironment.hasCluster,
            "needs the throwaway PostgreSQL cluster and tools that `make test` prepares (\(TestDatabase.environmentVariable) is not set)")
    }

    /// The test checks output with the Python libraries of the tools' environment (fhir.resources,
    /// fhirpathpy, …); without that environment it is skipped (`make test` prepares it).
    public static var needsToolsPython: Self {
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: TestEnvironment.toolsPython),
            "needs the tools' Python environment that `make test` prepares (\(TestEnvironment.toolsPython))")
    }

    /// The test checks output with Debian programs (poppler-utils, zbar-tools, …); where one of
    /// them is missing it is skipped, naming them (`make test` installs them).
    public static func needsPrograms(_ programs: String...) -> Self {
        .enabled(
            if: TestEnvironment.hasPrograms(programs),
            "needs \(programs.joined(separator: ", ")) on PATH (`make test` installs them)")
    }
}
