import Crypto
import Foundation

/// The id a site, an invitation or a signed PDF moved in from a MyStudies deployment has here: derived from the
/// app, the study and its id at the source (the SHA-256 of the three, as a version 8 UUID), so a
/// repeated or resumed import names the same row, and the response service's token and the
/// registration service's invitation agree without a table between them.
package enum MovedIds {
    package static func site(appId: String, studyId: String, sourceId: String) -> UUID {
        id("site", appId, studyId, sourceId)
    }

    package static func invitation(appId: String, studyId: String, sourceId: String) -> UUID {
        id("invitation", appId, studyId, sourceId)
    }

    /// The stored file of a signature's PDF.
    package static func consentPDF(appId: String, studyId: String, sourceId: String) -> UUID {
        id("consent-pdf", appId, studyId, sourceId)
    }

    private static func id(_ kind: String, _ parts: String...) -> UUID {
        // Lengths first, so no two lists of parts make the same text.
        let text = ([kind] + parts).map { "\($0.utf8.count):\($0)" }.joined()
        var bytes = Array(SHA256.hash(data: Array(text.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: custom
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
