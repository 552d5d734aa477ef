import Foundation

/// One participant, one name: the number the study gave them (the `ParticipantId` of its data,
/// numbered from 1 in each study), on every page that names them and in their page's address,
/// `/studies/{id}/participants/{number}`.
package enum ParticipantAddress {
    /// How a person is named: their number in the study, or, before their app has enrolled
    /// with the response service, that they have none yet.
    package static func label(_ number: Int64?) -> String {
        number.map { "Participant \($0)" } ?? "Not enrolled yet"
    }

    /// The name of the participant whose app holds the id hashing to `hash`, from the numbers
    /// the response service gave by hash (nil: it could not say).
    package static func label(hash: String?, in numbers: [String: Int64]?) -> String {
        guard let numbers else { return unknownNumber }
        return label(hash.flatMap { numbers[$0] })
    }

    /// The name while the response service cannot say the number.
    package static let unknownNumber = "Participant (number unavailable)"

    /// Their page: by number, or by registration's participant id while they have none.
    package static func path(studyId: String, number: Int64?, participantId: String) -> String {
        "/studies/\(AdminAPIClient.segment(studyId))/participants/"
            + (number.map(String.init) ?? AdminAPIClient.segment(participantId))
    }

    /// The number an address names: 1 to 18 ASCII digits (a participant id an app holds is
    /// longer, and never only digits of that length), nil for anything else.
    package static func number(inAddress segment: String) -> Int64? {
        let scalars = segment.unicodeScalars
        guard (1...18).contains(scalars.count), scalars.allSatisfy({ ("0"..."9").contains($0) }), let number = Int64(segment), number > 0
        else { return nil }
        return number
    }
}
