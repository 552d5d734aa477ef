import Foundation
import JSONText

/// A stored response as a FHIR `transaction` Bundle for a FHIR server of the study's own
/// (docs/fhir.md, Forwarding), as MyStudies writes each response into its FHIR store: the
/// participant's `Patient` and the answered `Questionnaire` version each created only when the
/// server has none (conditional create: `ifNoneExist` by identifier, by `url` and `version`), and
/// the `QuestionnaireResponse` created once however often it is sent (by its identifier), its
/// subject the Patient the server has or makes. A transaction is all or nothing, so a response
/// the server took is whole there, and one sent again changes nothing.
public enum FHIRTransaction {
    /// `patient` and `questionnaire` as the FHIR API serves them; `questionnaire` nil when the
    /// server has been sent that version already.
    public static func forwarding(
        response: QuestionnaireResponseMapping.Result, of stored: StoredResponse, patient: JSONValue, questionnaire: JSONValue?,
        naming: FHIRNaming
    ) -> JSONValue {
        let patientURL = "urn:uuid:\(UUID().uuidString.lowercased())"
        var entries: [JSONValue] = []
        if let questionnaire, let url = questionnaire["url"]?.string, let version = questionnaire["version"]?.string {
            entries.append(entry(
                created(questionnaire), type: "Questionnaire",
                ifNoneExist: "url=\(queryValue(url))&version=\(queryValue(version))"))
        }
        let patientIdentifier = patient["identifier"]?.array?.first
        entries.append(entry(
            created(patient), type: "Patient", fullURL: patientURL,
            ifNoneExist: patientIdentifier.flatMap(token).map { "identifier=\($0)" }))
        var answered = created(response.resource).object ?? JSONObject()
        let subject = FHIRJSON.object(["reference": .string(patientURL)])
        answered["subject"] = subject
        answered["source"] = subject
        if answered["identifier"] == nil {
            // A response of no run (a schema app's, say) is known by its own id.
            answered["identifier"] = FHIRJSON.object([
                "system": .string(naming.responseSystem(studyId: stored.studyId)), "value": .string(String(stored.id)),
            ])
        }
        entries.append(entry(
            .object(answered), type: "QuestionnaireResponse",
            ifNoneExist: answered["identifier"].flatMap(token).map { "identifier=\($0)" }))
        return FHIRJSON.object(["resourceType": .string("Bundle"), "type": .string("transaction"), "entry": .array(entries)])
    }

    /// A resource as a create sends it: the server gives the id and the version.
    static func created(_ resource: JSONValue) -> JSONValue {
        guard case .object(var members) = resource else { return resource }
        members.removeValue(forKey: "id")
        members.removeValue(forKey: "meta")
        return .object(members)
    }

    static func entry(_ resource: JSONValue, type: String, fullURL: String? = nil, ifNoneExist: String?) -> JSONValue {
        FHIRJSON.object([
            "fullUrl": .string(fullURL ?? "urn:uuid:\(UUID().uuidString.lowercased())"),
            "resource": resource,
            "request": FHIRJSON.object(["method": .string("POST"), "url": .string(type), "ifNoneExist": FHIRJSON.string(ifNoneExist)]),
        ])
    }

    /// A token search value, `system|value`, as a query writes it.
    static func token(_ identifier: JSONValue) -> String? {
        guard let value = identifier["value"]?.string else { return nil }
        return queryValue((identifier["system"]?.string).map { "\($0)|\(value)" } ?? value)
    }

    /// What a query value keeps as it is: RFC 3986's unreserved characters, and the `:`, `/` and
    /// `|` of FHIR's systems and tokens (as the specification's own examples write them); every
    /// other byte, `&` and `=` among them, percent-encoded as UTF-8.
    private static let queryKept = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/|")

    public static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: queryKept) ?? text
    }
}
