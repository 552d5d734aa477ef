import Foundation
import QRCode

/// A batch's printable sheet: one QR code per token, holding exactly the token, with the token
/// printed under it (and "used" beside one a participant has spent), twenty to an A4 page. The
/// PDF is written a page at a time as the tokens are read, so a batch of 100,000 never sits in
/// memory whole.
package struct EnrollmentTokenSheet: Sendable {
    /// What the person handed a code does with it, printed under every page's heading (one line
    /// of the page's width).
    package static let note =
        "One code per participant: they scan it, or type the text under it, in the study's app when asked for an enrollment token."

    package let tokens: TokenStore

    package init(tokens: TokenStore) {
        self.tokens = tokens
    }

    package func write(
        batch: TokenStore.Batch, studyId: String, to write: ([UInt8]) async throws -> Void
    ) async throws {
        let created = batch.createdAt.formatted(.iso8601.year().month().day())
        var sheet = QRSheet.Stream(
            heading: "\(studyId) enrollment tokens: batch \(batch.batchId.uuidString.prefix(8).lowercased()), "
                + "\(batch.count) tokens, created \(created)",
            note: Self.note, entryCount: batch.count)
        try await write(sheet.start())
        var pending: [QRSheet.Entry] = []
        pending.reserveCapacity(QRSheet.perPage)
        try await tokens.forEachToken(in: batch.batchId) { page in
            for token in page {
                pending.append(QRSheet.Entry(
                    code: try QRCode(encoding: token.token), label: token.used ? "\(token.token) used" : token.token))
                if pending.count == QRSheet.perPage {
                    try await write(sheet.page(pending[...]))
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        if !pending.isEmpty { try await write(sheet.page(pending[...])) }
        try await write(sheet.finish())
    }
}
