import ServiceKit

extension ResponseMigrations {
    /// The responses received per UTC day and activity, kept as they come and go
    /// (`study_response_days`), for the charts page: counting them when asked read every response
    /// of the last 30 days, which grows with the study.
    ///
    /// Kept by statement triggers over the rows each statement inserted or deleted, one upsert per
    /// day, activity and shard of a statement: a bulk insert of a million responses adds to a
    /// few hundred rows once each, where a row trigger would update each of them thousands of
    /// times in one transaction. The shard (the response id modulo 16) spreads the responses
    /// arriving at once over sixteen rows a day and activity, so their transactions do not wait
    /// on one row's lock until each commits. The service never changes what a response is counted
    /// under (its study, activity and time of arrival); an update that does (an operator's fix,
    /// a test that backdates a response) moves its count with it, by a row trigger that fires only
    /// when one of those columns is set, so processing's updates pay nothing.
    static let studyResponseDays = Migration(
        component: "response", version: 34, name: "study_response_days",
        statements: [
            """
            CREATE TABLE study_response_days (
                study_key text NOT NULL,
                activity_id text NOT NULL,
                day date NOT NULL,
                shard smallint NOT NULL,
                responses bigint NOT NULL,
                PRIMARY KEY (study_key, day, activity_id, shard)
            )
            """,
            """
            INSERT INTO study_response_days (study_key, activity_id, day, shard, responses)
            SELECT study_key, activity_id, (received_at AT TIME ZONE 'UTC')::date, (id % 16)::smallint, count(*)
            FROM responses GROUP BY 1, 2, 3, 4
            """,
            """
            CREATE FUNCTION study_response_days_added() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO study_response_days AS d (study_key, activity_id, day, shard, responses)
                SELECT study_key, activity_id, (received_at AT TIME ZONE 'UTC')::date, (id % 16)::smallint, count(*)
                FROM added GROUP BY 1, 2, 3, 4 ORDER BY 1, 3, 2, 4
                ON CONFLICT (study_key, day, activity_id, shard) DO UPDATE SET responses = d.responses + EXCLUDED.responses;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE FUNCTION study_response_days_removed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE study_response_days d SET responses = d.responses - r.responses
                FROM (SELECT study_key, activity_id, (received_at AT TIME ZONE 'UTC')::date AS day, (id % 16)::smallint AS shard,
                             count(*) AS responses
                      FROM removed GROUP BY 1, 2, 3, 4) r
                WHERE d.study_key = r.study_key AND d.day = r.day AND d.activity_id = r.activity_id AND d.shard = r.shard;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER study_response_days_added AFTER INSERT ON responses
            REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION study_response_days_added()
            """,
            """
            CREATE TRIGGER study_response_days_removed AFTER DELETE ON responses
            REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION study_response_days_removed()
            """,
            """
            CREATE FUNCTION study_response_days_moved() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE study_response_days SET responses = responses - 1
                WHERE study_key = OLD.study_key AND day = (OLD.received_at AT TIME ZONE 'UTC')::date
                  AND activity_id = OLD.activity_id AND shard = (OLD.id % 16)::smallint;
                INSERT INTO study_response_days AS d (study_key, activity_id, day, shard, responses)
                VALUES (NEW.study_key, NEW.activity_id, (NEW.received_at AT TIME ZONE 'UTC')::date, (NEW.id % 16)::smallint, 1)
                ON CONFLICT (study_key, day, activity_id, shard) DO UPDATE SET responses = d.responses + 1;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER study_response_days_moved AFTER UPDATE OF study_key, activity_id, received_at, id ON responses
            FOR EACH ROW
            WHEN (OLD.study_key IS DISTINCT FROM NEW.study_key OR OLD.activity_id IS DISTINCT FROM NEW.activity_id
                  OR (OLD.received_at AT TIME ZONE 'UTC')::date IS DISTINCT FROM (NEW.received_at AT TIME ZONE 'UTC')::date
                  OR OLD.id % 16 IS DISTINCT FROM NEW.id % 16)
            EXECUTE FUNCTION study_response_days_moved()
            """,
        ]
    )
}
