import ServiceKit

extension RegistrationMigrations {
    /// Accounts moved in from a MyStudies deployment (docs/moving-in.md): which account here each
    /// source account became. An account's row is written in the same transaction as the account,
    /// its study states, signatures and activity states, so its presence says the whole account
    /// came over, and a repeated or resumed import skips it. Kept when the account is deleted
    /// (`user_id` is then NULL), so a later import does not bring a deleted account back.
    static let moveIn: [Migration] = [
        Migration(
            component: "registration", version: 23, name: "moved_in_accounts",
            statements: [
                """
                CREATE TABLE moved_in_accounts (
                    app_id text NOT NULL,
                    source_user_id text NOT NULL,
                    user_id uuid REFERENCES participants (user_id) ON DELETE SET NULL,
                    source text NOT NULL,
                    moved_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (app_id, source_user_id)
                )
                """,
                "CREATE INDEX moved_in_accounts_user ON moved_in_accounts (user_id) WHERE user_id IS NOT NULL",
            ]
        )
    ]
}
