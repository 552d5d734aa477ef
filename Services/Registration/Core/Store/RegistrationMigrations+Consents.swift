import ServiceKit

extension RegistrationMigrations {
    /// Consent records as the response service's FHIR API reads them (`InternalCalls.consentRecords`):
    /// a study's records in the order of their ids, each with the hash of the participant id its
    /// participant's app holds, and when the participant left the study after signing it. Both
    /// are kept on the record itself, so that a record stays linked to its participant, and ended,
    /// when the account is deleted (the record that consent was given outlives the account, as
    /// migration 4 says).
    static let consents: [Migration] = [
        Migration(
            component: "registration", version: 22, name: "consent_record_links",
            statements: [
                "ALTER TABLE consent_records ADD COLUMN participant_token_hash text",
                "ALTER TABLE consent_records ADD COLUMN left_at timestamptz",
                """
                UPDATE consent_records c SET participant_token_hash = ps.participant_token_hash,
                    left_at = CASE WHEN ps.status = 'Withdrawn' THEN greatest(c.created_at, coalesce(ps.withdrawn_at, ps.updated_at)) END
                FROM participant_studies ps
                WHERE ps.user_id = c.user_id AND ps.study_id = c.study_id
                """,
                "CREATE INDEX consent_records_study_id ON consent_records (study_id, id)",
                // Whichever write links a participant to their app (a study state, an invitation's
                // enrollment), their unlinked records follow; a record made after it takes the link
                // at once. A record keeps the link it has: one signed before the participant left
                // and joined again (a new participant id) stays with the enrollment it was for.
                """
                CREATE FUNCTION link_consent_records() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    UPDATE consent_records SET participant_token_hash = NEW.participant_token_hash
                    WHERE user_id = NEW.user_id AND study_id = NEW.study_id AND participant_token_hash IS NULL;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_studies_link_consents
                AFTER INSERT ON participant_studies
                FOR EACH ROW WHEN (NEW.participant_token_hash IS NOT NULL)
                EXECUTE FUNCTION link_consent_records()
                """,
                // Every study state sets the column (to itself, mostly): only a change is followed.
                """
                CREATE TRIGGER participant_studies_relink_consents
                AFTER UPDATE OF participant_token_hash ON participant_studies
                FOR EACH ROW WHEN (NEW.participant_token_hash IS NOT NULL
                                   AND OLD.participant_token_hash IS DISTINCT FROM NEW.participant_token_hash)
                EXECUTE FUNCTION link_consent_records()
                """,
                // Leaving a study (withdrawing, or deleting the account) ends what was signed for it;
                // a record signed after joining again is not ended by the earlier leaving.
                """
                CREATE FUNCTION end_consent_records() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    UPDATE consent_records SET left_at = greatest(created_at, CASE WHEN TG_OP = 'DELETE' THEN now()
                                                                               ELSE coalesce(NEW.withdrawn_at, now()) END)
                    WHERE user_id = OLD.user_id AND study_id = OLD.study_id AND left_at IS NULL;
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER participant_studies_withdrawn_end_consents
                AFTER UPDATE OF status ON participant_studies
                FOR EACH ROW WHEN (NEW.status = 'Withdrawn' AND OLD.status IS DISTINCT FROM 'Withdrawn')
                EXECUTE FUNCTION end_consent_records()
                """,
                """
                CREATE TRIGGER participant_studies_deleted_end_consents
                AFTER DELETE ON participant_studies
                FOR EACH ROW EXECUTE FUNCTION end_consent_records()
                """,
                """
                CREATE FUNCTION link_new_consent_record() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.participant_token_hash IS NULL THEN
                        NEW.participant_token_hash := (SELECT participant_token_hash FROM participant_studies
                                                       WHERE user_id = NEW.user_id AND study_id = NEW.study_id);
                    END IF;
                    RETURN NEW;
                END
                $$
                """,
                """
                CREATE TRIGGER consent_records_link
                BEFORE INSERT ON consent_records
                FOR EACH ROW EXECUTE FUNCTION link_new_consent_record()
                """,
            ]
        )
    ]
}
