import Testing
import TestSupport
import ZipArchive

/// Archives from outside: what is read, and every way a crafted one is refused.
@Suite struct ZipArchiveTests {
    static let limits = ZipArchive.Limits(maxFiles: 1_000, maxTotalBytes: 200 << 20, maxFileBytes: 100 << 20, maxRatio: 200)

    private func refusal(_ bytes: [UInt8]) -> String? {
        do {
            _ = try ZipArchive(bytes, limits: Self.limits)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func storedAndDeflatedFilesReadBack() throws {
        var zip = ZipWriter()
        let answers = Array(#"{"q1": "blue", "q2": 42}"#.utf8)
        let motion = Array(String(repeating: #"{"t": 0.01, "x": 0.1}, "#, count: 2_000).utf8)
        zip.add("metadata.json", Array(#"{"files": []}"#.utf8), deflate: false)
        zip.add("answers.json", answers)
        zip.add("motion/motion.json", motion)
        zip.entries.append(.init(name: "motion/", data: [], deflate: false))
        let archive = try ZipArchive(zip.bytes(), limits: Self.limits)
        #expect(archive.files.map(\.name) == ["metadata.json", "answers.json", "motion/motion.json"])
        #expect(archive["answers.json"] == answers)
        #expect(archive["motion/motion.json"] == motion)
    }

    /// A ZIP's names are bytes: two that differ only in normalisation are two files, each found
    /// by its own name.
    @Test func namesThatDifferOnlyInNormalisationAreTwoFiles() throws {
        var zip = ZipWriter()
        zip.add("caf\u{e9}.json", Array("1".utf8))
        zip.add("cafe\u{301}.json", Array("2".utf8))
        let archive = try ZipArchive(zip.bytes(), limits: Self.limits)
        #expect(archive.files.count == 2)
        #expect(archive["caf\u{e9}.json"] == Array("1".utf8))
        #expect(archive["cafe\u{301}.json"] == Array("2".utf8))

        var twice = ZipWriter()
        twice.add("caf\u{e9}.json", Array("1".utf8))
        twice.add("caf\u{e9}.json", Array("2".utf8))
        #expect(refusal(twice.bytes()) == "it holds caf\u{e9}.json twice")
    }

    @Test func namesThatLeaveTheFolderAndLinksAreRefused() {
        let names = ["../evil.json", "a/../../evil.json", "/etc/passwd", "a\\b.json", "C:evil.json", "./a.json", "a\u{0}b"]
        #expect(names.count == 7)
        for name in names {
            var zip = ZipWriter()
            zip.add("ok.json", Array("{}".utf8))
            zip.add(name, Array("{}".utf8))
            #expect(refusal(zip.bytes()) != nil, "\(name)")
        }
        var link = ZipWriter()
        link.entries.append(.init(name: "answers.json", data: Array("/etc/passwd".utf8), deflate: false, symlink: true))
        #expect(refusal(link.bytes()) == "answers.json is a symbolic link")
    }

    @Test func aZipBombIsRefusedBeforeItIsUnpacked() {
        // 1 GiB of zeros, deflated to about 1 MB, honest about its size.
        let compressed = ZipWriter.deflated(chunks: 1_024) { [UInt8](repeating: 0, count: 1 << 20) }
        #expect(compressed.count < 2 << 20)
        var zip = ZipWriter()
        zip.entries.append(.init(name: "bomb.json", data: []))
        let honest = zip.bytes(compressed: ["bomb.json": (compressed, 1 << 30, 0)])
        #expect(refusal(honest) == "bomb.json is larger than 104857600 bytes")
        // The same data claiming 1 KB: refused as soon as it passes what it claims.
        let lying = zip.bytes(compressed: ["bomb.json": (compressed, 1_024, 0)])
        #expect(refusal(lying) == "bomb.json unpacks to more than it says")
        // 10 MB of zeros claiming its size: within the size limit, past the ratio.
        let dense = ZipWriter.deflated(chunks: 10) { [UInt8](repeating: 0, count: 1 << 20) }
        #expect(refusal(zip.bytes(compressed: ["bomb.json": (dense, 10 << 20, 0)])) == "bomb.json would grow more than 200 times when unpacked")
    }

    @Test func tenThousandTinyFilesAreRefused() {
        var zip = ZipWriter()
        for index in 0..<10_000 { zip.add("f\(index).json", [UInt8(ascii: "1")], deflate: false) }
        #expect(zip.entries.count == 10_000)
        #expect(refusal(zip.bytes()) == "it holds more than 1000 files")
    }

    @Test func aTruncatedOrDamagedArchiveIsRefused() {
        var zip = ZipWriter()
        zip.add("answers.json", Array(String(repeating: "answer ", count: 500).utf8))
        zip.add("metadata.json", Array(#"{"files": []}"#.utf8))
        let whole = zip.bytes()
        #expect(refusal(whole) == nil)
        for cut in [1, 10, 22, whole.count / 2, whole.count - 1] {
            #expect(refusal(Array(whole.prefix(whole.count - cut))) != nil, "cut \(cut)")
        }
        #expect(refusal([]) == "it is not a ZIP archive (too short)")
        #expect(refusal(Array("not a zip at all, but long enough to look".utf8)) != nil)
        var damaged = zip
        damaged.entries[0].crc = 1
        #expect(refusal(damaged.bytes()) == "answers.json: its checksum does not match (damaged)")
        var twice = ZipWriter()
        twice.add("a.json", Array("{}".utf8))
        twice.add("a.json", Array("[]".utf8))
        #expect(refusal(twice.bytes()) == "it holds a.json twice")
    }
}
