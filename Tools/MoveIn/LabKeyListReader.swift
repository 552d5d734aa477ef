import Foundation
import StudyModels
import ZipArchive

/// Reads what a LabKey-era response server's administrators export (docs/moving-in.md): the
/// folder's list archive (`.lists.zip`, LabKey's "Export List Archive", or the `lists/` folder of a
/// folder export zipped), and the `Participant` and `ResponseMetadata` tables of the
/// `mobileappstudy` schema exported as TSV. The archive is read within limits (a crafted one is
/// refused with a reason); its XML files are LabKey's own settings and are not needed.
public enum LabKeyListReader {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// A study's lists: many files, a large one a few hundred megabytes of text.
    public static let limits = ZipArchive.Limits(maxFiles: 20_000, maxTotalBytes: 4 << 30, maxFileBytes: 1 << 30, maxRatio: 1_000)
    /// The grid exports, each one file.
    public static let maxTableBytes = 2 << 30

    public static func read(lists: URL, participants: URL, responseMetadata: URL) throws -> LabKeyListExport {
        LabKeyListExport(
            lists: try self.lists(Array(try Data(contentsOf: lists))),
            participants: try table(participants, required: LabKeyListExport.participantColumns),
            responseMetadata: try table(responseMetadata, required: LabKeyListExport.responseMetadataColumns))
    }

    /// The archive's lists: each `<name>.tsv` at its top or in a `lists/` folder.
    public static func lists(_ archive: [UInt8]) throws -> [LabKeyListExport.Table] {
        let zip: ZipArchive
        do { zip = try ZipArchive(archive, limits: limits) } catch { throw Failure(description: "the list archive cannot be read: \(error.reason)") }
        var tables: [LabKeyListExport.Table] = []
        for file in zip.files {
            var name = file.name
            if name.hasPrefix("lists/") { name.removeFirst("lists/".count) }
            guard name.hasSuffix(".tsv"), !name.contains("/") else { continue }
            name.removeLast(".tsv".count)
            guard let text = String(validating: file.bytes, as: UTF8.self) else {
                throw Failure(description: "\(file.name) is not UTF-8 text")
            }
            do { tables.append(try LabKeyListExport.Table(name: name, tsv: text)) } catch {
                throw Failure(description: "the list archive cannot be read: \(error.description)")
            }
        }
        guard !tables.isEmpty else { throw Failure(description: "the list archive holds no list (.tsv)") }
        return tables
    }

    static func table(_ url: URL, required: [String]) throws -> LabKeyListExport.Table {
        let name = url.deletingPathExtension().lastPathComponent
        let size = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
        guard size <= maxTableBytes else { throw Failure(description: "\(url.lastPathComponent) is larger than \(maxTableBytes) bytes") }
        guard let text = String(validating: Array(try Data(contentsOf: url)), as: UTF8.self) else {
            throw Failure(description: "\(url.lastPathComponent) is not UTF-8 text")
        }
        let table: LabKeyListExport.Table
        do { table = try LabKeyListExport.Table(name: name, tsv: text) } catch { throw Failure(description: error.description) }
        if let missing = LabKeyListExport.missingColumn(table, of: required) {
            throw Failure(description: "\(url.lastPathComponent) has no \(missing) column: export it with \(required.joined(separator: ", "))")
        }
        return table
    }
}
