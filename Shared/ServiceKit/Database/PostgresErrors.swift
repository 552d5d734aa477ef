import PostgresNIO

/// What a database refusal means, for the callers that answer it as a rule rather than a fault.
public enum PostgresErrors {
    /// A unique index refused the row (SQLSTATE 23505), raised directly or inside a transaction.
    public static func isUniqueViolation(_ error: any Error) -> Bool {
        if let transaction = error as? PostgresTransactionError {
            return transaction.closureError.map(isUniqueViolation) ?? false
        }
        return (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }
}
