/// The three error shapes StudyStack sends on the wire.
///
/// Each API family keeps the format its clients already parse: the MyStudies apps read
/// study-metadata and registration failures from the `StatusMessage` header, the response
/// server's clients read a LabKey-style JSON envelope, and the admin API uses one plain JSON
/// error object. The services render these through ServiceKit; these types only describe the
/// bodies, so tests and tools can decode them too.

/// The body of an admin-API (and internal-API) error: `{"error": {"code": ..., "message": ...}}`.
public struct AdminErrorBody: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        /// A stable machine-readable code, for example `invalid_request` or `unauthenticated`.
        public var code: String
        /// A sentence for a person.
        public var message: String
        /// Per-field problems, when there are several (for example document validation).
        public var problems: [Problem]?

        public init(code: String, message: String, problems: [Problem]? = nil) {
            self.code = code
            self.message = message
            self.problems = problems
        }
    }

    /// One problem inside a request, located by a JSON Pointer (RFC 6901).
    public struct Problem: Codable, Sendable, Equatable {
        public var pointer: String
        public var message: String

        public init(pointer: String, message: String) {
            self.pointer = pointer
            self.message = message
        }
    }

    public var error: Detail

    public init(code: String, message: String, problems: [Problem]? = nil) {
        self.error = Detail(code: code, message: message, problems: problems)
    }
}

/// The LabKey `ApiResponseWriter` failure envelope the response server's clients parse:
/// `{"success": false, "exception": "...", "errors": [{id, msg, field, message, severity}]}`.
///
/// Clients only read `exception`; `errors` repeats it per field as the original did.
public struct LabKeyErrorEnvelope: Codable, Sendable, Equatable {
    public struct FieldError: Codable, Sendable, Equatable {
        public var id: String?
        public var msg: String
        public var field: String?
        public var message: String
        public var severity: String?

        public init(id: String? = nil, msg: String, field: String? = nil, message: String, severity: String? = nil) {
            self.id = id
            self.msg = msg
            self.field = field
            self.message = message
            self.severity = severity
        }
    }

    public var success: Bool
    public var exception: String
    public var errors: [FieldError]

    /// Several validation failures, `(field, message)`; `exception` is the first one's message.
    public init(failures: [(field: String?, message: String)]) {
        self.success = false
        self.exception = failures.first?.message ?? ""
        self.errors = failures.map { failure in
            FieldError(
                id: failure.field.map { "requiredError.\($0)" } ?? "Error", msg: failure.message,
                field: failure.field ?? "form", message: failure.message, severity: "ERROR")
        }
    }

    /// A validation failure on one field (or on the whole form when `field` is `nil`).
    public init(exception: String, field: String? = nil) {
        self.success = false
        self.exception = exception
        self.errors = [
            FieldError(
                id: field.map { "requiredError.\($0)" } ?? "Error",
                msg: exception,
                field: field ?? "form",
                message: exception,
                severity: "ERROR"
            )
        ]
    }
}

/// The codes the original WCP and registration servers put in the `status` header of a failure.
///
/// The apps map the HTTP status to behaviour (401 triggers a token refresh) and show the
/// `StatusMessage` header; `status` and `title` are kept for compatibility.
public enum StatusMessageCode: Int, Codable, Sendable {
    case invalidAuthorization = 101
    case invalidInput = 102
    case noData = 103
    case unknown = 104

    /// The `title` header the originals sent with each code.
    public var title: String {
        switch self {
        case .invalidAuthorization: "Unauthorized"
        case .invalidInput: "Invalid input"
        case .noData: "No data"
        case .unknown: "Unknown error"
        }
    }
}

/// The JSON body StudyStack adds to a `StatusMessage`-style failure, for people using curl.
/// The apps ignore it and read the headers.
public struct StatusMessageErrorBody: Codable, Sendable, Equatable {
    public var status: Int
    public var title: String
    public var message: String

    public init(code: StatusMessageCode, message: String) {
        self.status = code.rawValue
        self.title = code.title
        self.message = message
    }
}
