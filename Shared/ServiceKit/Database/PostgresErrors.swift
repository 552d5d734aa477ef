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

    static func sqlState(of error: any Error) -> String? {
        if let transaction = error as? PostgresTransactionError {
            return transaction.closureError.flatMap(sqlState(of:))
        }
        return (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}
