import PostgresNIO

/// What a database refusal means, for the callers that answer it as a rule rather than a fault.
public enum PostgresErrors {
    /// A unique index refused the row (SQLSTATE 23505), raised directly or inside a transaction.
    public static func isUniqueViolation(_ error: any Error) -> Bool {
        sqlState(of: error) == "23505"
    }

    /// A value could not be read as its type (SQLSTATE class 22, data exception: a date out of
    /// range, a malformed number), raised directly or inside a transaction.
    public static func isDataException(_ error: any Error) -> Bool {
        sqlState(of: error)?.hasPrefix("22") == true
    }

    /// PostgreSQL could not be reached or went away under the statement: the connection was
    /// refused or cut, the server is shutting down or starting (SQLSTATE 57P01 to 57P03), or a
    /// pooler in front of it cannot log in to it (class 08, which PgBouncer uses for
    /// `server_login_retry`). The request may succeed a moment later; it is not the request's
    /// fault nor a bug.
    public static func isUnavailable(_ error: any Error) -> Bool {
        if let transaction = error as? PostgresTransactionError {
            return [transaction.beginError, transaction.closureError, transaction.commitError].contains {
                $0.map(isUnavailable) ?? false
            }
        }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed:
            return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
        default:
            return false
        }
    }

    static func sqlState(of error: any Error) -> String? {
        if let transaction = error as? PostgresTransactionError {
            return transaction.closureError.flatMap(sqlState(of:))
        }
        return (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}
