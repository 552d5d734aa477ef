import ServiceKit

extension RegistrationMigrations {
    /// Who still owes a signature after a consent change that asked those who signed to sign
    /// again, and the reminders a study admin sends them (docs/admin-api.md, Consent changes).
    static let consentReminders: [Migration] = [
        Migration(
            component: "registration", version: 24, name: "consent_reminders",
            statements: [
                // The one definition of owing a signature, for the participants list, its filter
                // and the reminders: in the study (as the app reports it) with no completed
                // consent of a version in force (`in_force` NULL: any version is).
                """
                CREATE FUNCTION owes_consent(p_user uuid, p_study text, p_status text, in_force text[])
                RETURNS boolean LANGUAGE sql STABLE AS $$
                    SELECT p_status = 'inProgress' AND NOT EXISTS (
                        SELECT 1 FROM consent_records c
                        WHERE c.user_id = p_user AND c.study_id = p_study AND c.status = 'completed'
                          AND (in_force IS NULL OR c.version = ANY (in_force)))
                $$
                """,
                """
                CREATE TABLE consent_reminders (
                    id bigserial PRIMARY KEY,
                    user_id uuid NOT NULL REFERENCES participants (user_id) ON DELETE CASCADE,
                    study_id text NOT NULL,
                    -- The versions in force when it was asked for (NULL: any).
                    consent_versions text[],
                    quiet_from text NOT NULL,
                    quiet_until text NOT NULL,
                    title text NOT NULL,
                    body text NOT NULL,
                    requested_by text NOT NULL,
                    requested_at timestamptz NOT NULL DEFAULT now(),
                    -- When it is next looked at; NULL once decided.
                    due_at timestamptz,
                    decided_at timestamptz,
                    outcome text CHECK (outcome IN ('queued', 'opted_out', 'no_device', 'signed', 'left')),
                    devices integer,
                    message jsonb,
                    CHECK ((decided_at IS NULL) = (outcome IS NULL) AND (decided_at IS NULL) <> (due_at IS NULL)),
                    CHECK (outcome IS DISTINCT FROM 'queued' OR message IS NOT NULL)
                )
                """,
                // One undecided reminder a participant: asking again while one waits adds none.
                "CREATE UNIQUE INDEX consent_reminders_waiting ON consent_reminders (user_id, study_id) WHERE decided_at IS NULL",
                "CREATE INDEX consent_reminders_due ON consent_reminders (due_at) WHERE due_at IS NOT NULL",
                "CREATE INDEX consent_reminders_study ON consent_reminders (study_id, id)",
                // A push is of a notification from study-metadata, a run's reminder or a consent reminder.
                "ALTER TABLE push_outbox ADD COLUMN consent_reminder_id bigint REFERENCES consent_reminders (id) ON DELETE CASCADE",
                "CREATE INDEX push_outbox_consent_reminder ON push_outbox (consent_reminder_id) WHERE consent_reminder_id IS NOT NULL",
                "ALTER TABLE push_outbox DROP CONSTRAINT push_outbox_one_source",
                """
                ALTER TABLE push_outbox ADD CONSTRAINT push_outbox_one_source
                CHECK (num_nonnulls(notification_id, reminder_id, consent_reminder_id) = 1)
                """,
            ]
        )
    ]
}
