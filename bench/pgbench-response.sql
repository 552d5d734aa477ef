-- One processResponse's database work, as the response service does it, for pgbench: the
-- participant lookup, then the insert of one 30-answer response with its metadata, a fresh run id,
-- and the fingerprint computed as the service's ingest statement computes it, in one transaction.
-- bench.sh passes -D lo=<first participant id> -D hi=<last>, and the answers and metadata wrk sends
-- (bench/response-30.json) as -D answers=<JSON> -D metadata=<JSON>. They are bound per
-- transaction, as the service binds what it receives, so PostgreSQL reads and hashes the answers
-- each time. Written into the statement as constants instead, they would be read and hashed once,
-- when the statement is planned (pgbench -M prepared keeps a generic plan, and the hash of a
-- constant is folded into it), and pgbench would do less than the service must. `answers` is
-- MATERIALIZED so they are read once, not once for each use of `d`, as the service's statement does.
\set n random(:lo, :hi)
\set run random(1, 1000000000)
BEGIN;
SELECT p.id, p.study_key, s.study_id, p.status = 'withdrawn', s.collection_enabled
FROM participants p JOIN studies s ON s.study_key = p.study_key WHERE p.id = :n;
WITH answers AS MATERIALIZED (
    SELECT (:answers)::jsonb AS d
)
INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, language,
                       metadata, data, fingerprint)
SELECT :n, 'BENCHSTUDY', 'daily30', '1.0', :run || '-pgbench', NULL,
       (:metadata)::jsonb, d,
       encode(sha256(convert_to('daily30' || chr(31) || '1.0' || chr(31) || (:run || '-pgbench') || chr(31), 'UTF8')
                     || int8send(jsonb_hash_extended(d, 0)) || int8send(jsonb_hash_extended(d, 1))), 'hex')
FROM answers
ON CONFLICT (participant_id, fingerprint) DO NOTHING
RETURNING id;
END;
