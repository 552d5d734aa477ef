import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `PUT /admin/v1/studies/{id}/participant-properties` (editor): the research team's values per
/// enrollment token, as CSV (`token,<propertyId>,...`) or JSON (`{"rows": [{"token", "values":
/// {"<propertyId>": value}}]}`). Every row is checked first and nothing is written unless all are
/// good.
package struct AdminPropertyRoutes {
    package struct Upload: Decodable {
        package struct Row: Decodable {
            package var token: String
            package var values: JSONObject
        }

        package var rows: [Row]
    }

    package struct Uploaded: ResponseEncodable {
        package var rows: Int
    }

    package let properties: ParticipantPropertyStore

    package init(properties: ParticipantPropertyStore) {
        self.properties = properties
    }

    package func add(to routes: ResponseAdminRouter) {
        routes.on(AdminCalls.participantProperties, use: upload)
    }

    @Sendable package func upload(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> Uploaded {
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let rows: [ParticipantProperties.Row]
        let type = request.headers[.contentType]?.lowercased() ?? ""
        if type.hasPrefix("text/csv") {
            switch ParticipantProperties.rows(csv: String(buffer: body)) {
            case .success(let parsed): rows = parsed
            case .failure(let problem): throw Self.invalid([problem], csv: true)
            }
        } else if type.hasPrefix("application/json") {
            guard let upload = try? JSONDecoder().decode(Upload.self, from: Data(buffer: body)) else {
                throw APIError.badRequest("the body must be {\"rows\": [{\"token\", \"values\": {...}}]}", field: "rows")
            }
            rows = try upload.rows.map { row in
                guard let values = row.values.stringKeyed({ value -> String?? in .some(value == .null ? nil : value.text) }) else {
                    throw APIError.badRequest("two property names of a row differ only in Unicode normalisation", field: "rows")
                }
                return ParticipantProperties.Row(token: row.token, values: values)
            }
        } else {
            throw APIError(
                .unsupportedMediaType, code: "unsupported_media_type", message: "send text/csv or application/json")
        }
        let problems = try await properties.upload(rows, studyKey: study.key, actor: admin.email)
        guard problems.isEmpty else { throw Self.invalid(problems, csv: type.hasPrefix("text/csv")) }
        return Uploaded(rows: rows.count)
    }

    /// Each problem located by the CSV line (`/lines/{n}/{field}`, as registration's invitation
    /// import does) or the JSON row (`/rows/{n}/{field}`, from 1).
    package static func invalid(_ problems: [ParticipantProperties.Problem], csv: Bool) -> ResponseAdminError {
        .propertiesInvalid(problems.map {
            ValidationProblem(pointer: "/\(csv ? "lines" : "rows")/\($0.row)/\($0.field)", message: $0.message)
        })
    }
}
