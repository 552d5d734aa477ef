import ServiceKit

extension RegistrationMigrations {
    /// The e-mail and push queues' waiting rows in claim order, as `internal_outbox`'s
    /// (ServiceKit's `internal_outbox_waiting`): the rows sent are kept, and a claim walked the
    /// primary key through every one of them to reach the first waiting. A study of a million
    /// reminded daily sends a million pushes a day.
    static let queueWaiting: [Migration] = [
        Migration(
            component: "registration", version: 35, name: "queues_waiting",
            statements: [
                "CREATE INDEX mail_outbox_waiting ON mail_outbox (id) WHERE sent_at IS NULL AND gave_up_at IS NULL",
                "CREATE INDEX push_outbox_waiting ON push_outbox (id) WHERE sent_at IS NULL AND gave_up_at IS NULL",
            ]
        )
    ]
}
