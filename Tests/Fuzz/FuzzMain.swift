import Foundation

#if FUZZING
/// libFuzzer's driver, for a target chosen at run time (`FUZZ_TARGET`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The target libFuzzer drives, set once before the driver starts.
nonisolated(unsafe) var selectedTarget: FuzzTargets.Target?

/// libFuzzer's entry point: one input, run through the selected target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    selectedTarget?(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
#endif

/// `studystack-fuzz` (docs/development.md, Fuzzing):
/// - `studystack-fuzz list`: the targets;
/// - `studystack-fuzz replay DIRECTORY`: every file under `DIRECTORY/<target>/` through its
///   target, as `make test` does with the committed corpora and regression inputs (no
///   exploration; a trap ends the run with the file's name printed first);
/// - built with `-sanitize=fuzzer` and `-DFUZZING` (`make fuzz`): `FUZZ_TARGET=<target>
///   studystack-fuzz [libFuzzer's options and corpus folders]` explores that target.
@main
struct FuzzMain {
    static func main() {
        let arguments = CommandLine.arguments
        #if FUZZING
        if let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] {
            guard let target = FuzzTargets.named(name) else { fail("no target \(name); studystack-fuzz list names them") }
            selectedTarget = target
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        }
        #endif
        switch (arguments.count, arguments.dropFirst().first) {
        case (2, "list"):
            for target in FuzzTargets.all { print(target.name) }
        case (3, "replay"):
            replay(URL(fileURLWithPath: arguments[2]))
        default:
            fail("usage: studystack-fuzz list | replay DIRECTORY (FUZZ_TARGET=name with a -sanitize=fuzzer build)")
        }
    }

    static func replay(_ root: URL) {
        var total = 0
        for target in FuzzTargets.all {
            let folder = root.appendingPathComponent(target.name)
            let files = ((try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []).sorted()
            var count = 0
            for file in files {
                let url = folder.appendingPathComponent(file)
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue,
                    let data = FileManager.default.contents(atPath: url.path)
                else { continue }
                // Said before it runs: a trap ends the process, and this names the input that did it.
                FileHandle.standardError.write(Data("\(target.name)/\(file)\n".utf8))
                target.run(Array(data))
                count += 1
            }
            print("\(target.name): \(count) inputs replayed")
            total += count
        }
        print("\(total) inputs replayed through \(FuzzTargets.all.count) targets, none trapped")
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(2)
    }
}
