import ServiceKit

extension ResponseMigrations {
    /// One participant, one name: each study numbers its participants from 1 (`participants.number`),
    /// and that number is the `ParticipantId` of its tables, exports and LabKey views, the name the
    /// console gives them everywhere. `participants.id` stays the service's own key (responses,
    /// archives and timings refer to it), never shown.
    ///
    /// Numbers are handed out by a trigger from a counter per study, so every way a participant
    /// row is made (an app's enrollment, the schema app, a rehearsal, a move-in) numbers it the
    /// same way; the counter's row is locked until the enrolling transaction ends, so two
    /// enrollments never take one number, and a number is never given twice even after deletion.
    static let studyParticipantNumbers = Migration(
        component: "response", version: 33, name: "participant_numbers_per_study",
        statements: [
            "ALTER TABLE participants ADD COLUMN number bigint",
            """
            UPDATE participants p SET number = n.number
            FROM (SELECT id, row_number() OVER (PARTITION BY study_key ORDER BY id) AS number FROM participants) n
            WHERE n.id = p.id
            """,
            """
            CREATE TABLE participant_counters (
                study_key text PRIMARY KEY,
                last_number bigint NOT NULL
            )
            """,
            "INSERT INTO participant_counters (study_key, last_number) SELECT study_key, max(number) FROM participants GROUP BY study_key",
            """
            CREATE FUNCTION participants_number() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO participant_counters AS c (study_key, last_number) VALUES (NEW.study_key, 1)
                ON CONFLICT (study_key) DO UPDATE SET last_number = c.last_number + 1
                RETURNING c.last_number INTO NEW.number;
                RETURN NEW;
            END
            $$
            """,
            "CREATE TRIGGER participants_number BEFORE INSERT ON participants FOR EACH ROW EXECUTE FUNCTION participants_number()",
            "ALTER TABLE participants ALTER COLUMN number SET NOT NULL",
            "CREATE UNIQUE INDEX participants_study_number ON participants (study_key, number)",
            // Every study table's ParticipantId becomes the number: first negated, so no value
            // meets another participant's old one in a unique index on the way, then the number.
            // Its key to participants.id goes, since a number is unique within its study only.
            """
            DO $$
            DECLARE
                t record;
                c record;
            BEGIN
                FOR t IN SELECT s.schema_name, l.sql_name FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key LOOP
                    FOR c IN SELECT conname FROM pg_constraint
                             WHERE conrelid = format('%I.%I', t.schema_name, t.sql_name)::regclass AND contype = 'f'
                               AND confrelid = 'public.participants'::regclass LOOP
                        EXECUTE format('ALTER TABLE %I.%I DROP CONSTRAINT %I', t.schema_name, t.sql_name, c.conname);
                    END LOOP;
                    EXECUTE format('UPDATE %I.%I SET "ParticipantId" = -"ParticipantId" WHERE "ParticipantId" IS NOT NULL',
                                   t.schema_name, t.sql_name);
                    EXECUTE format('UPDATE %I.%I x SET "ParticipantId" = p.number FROM public.participants p WHERE p.id = -x."ParticipantId"',
                                   t.schema_name, t.sql_name);
                END LOOP;
            END
            $$
            """,
            // The participants' query scope still names participants.id (signed); a study table's
            // policy asks for that participant's number in the table's own study.
            """
            CREATE FUNCTION public.query_scope_number(study text) RETURNS bigint
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
            AS $$
                SELECT p.number FROM public.participants p
                WHERE p.id = public.query_scope_participant() AND p.study_key = study
            $$
            """,
            "REVOKE ALL ON FUNCTION public.query_scope_number(text) FROM PUBLIC",
            // LabKey's mobileappstudy views name participants by the same number.
            """
            CREATE OR REPLACE VIEW mobileappstudy."Participant" WITH (security_barrier) AS
            SELECT p.number AS "ParticipantId", p.status AS "Status", p.allow_data_sharing AS "AllowDataSharing",
                   p.language AS "Language", p.enrolled_at AS "Enrolled", p.withdrawn_at AS "Withdrawn",
                   p.app_token_hash AS "AppTokenSHA256", p.external_id AS "ExternalId", p.arm AS "Arm",
                   p.arm_ordinal AS "ArmOrdinal"
            FROM public.participants p WHERE p.study_key = (SELECT public.query_scope_study())
            """,
            """
            CREATE OR REPLACE VIEW mobileappstudy."Response" WITH (security_barrier) AS
            SELECT r.id AS "RowId", p.number AS "ParticipantId", r.activity_id AS "ActivityId",
                   r.activity_version AS "ActivityVersion", r.activity_run_id AS "RunId", r.language AS "Language",
                   r.status AS "Status", r.error_message AS "ErrorMessage", r.attempts AS "Attempts",
                   r.received_at AS "Received", r.processed_at AS "Processed", r.data::text AS "Response"
            FROM public.responses r JOIN public.participants p ON p.id = r.participant_id
            WHERE r.study_key = (SELECT public.query_scope_study())
            """,
            """
            CREATE OR REPLACE VIEW mobileappstudy."EnrollmentToken" WITH (security_barrier) AS
            SELECT t.batch_id::text AS "BatchId", t.position AS "Position", b.kind AS "Kind",
                   p.number AS "ParticipantId", t.used_at AS "Used", t.expires_at AS "Expires",
                   t.revoked_at AS "Revoked", b.created_at AS "Created"
            FROM public.enrollment_tokens t JOIN public.token_batches b ON b.id = t.batch_id
                 LEFT JOIN public.participants p ON p.id = t.participant_id
            WHERE b.study_key = (SELECT public.query_scope_study())
            """,
            """
            CREATE OR REPLACE VIEW mobileappstudy."ResponseMetadata" WITH (security_barrier) AS
            SELECT m.id AS "RowId", m.response_id AS "ResponseId", p.number AS "ParticipantId",
                   r.activity_id AS "ActivityId", m.list_name AS "ListName", m.top_key AS "ListKey",
                   m.field_name AS "FieldName", m.start_time AS "StartTime", m.end_time AS "EndTime",
                   m.skipped AS "Skipped"
            FROM public.response_metadata m JOIN public.responses r ON r.id = m.response_id
                 JOIN public.participants p ON p.id = r.participant_id
            WHERE r.study_key = (SELECT public.query_scope_study())
            """,
        ]
    )
}
