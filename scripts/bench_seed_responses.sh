# Sourced by scripts/bench_seed.sh and scripts/bench_seed_grow.sh: the seeded participants'
# processed daily30 responses, written the same way at every size.
#
# seed_answers: bench/response-30.json, compact, the answers of every seeded response.
# seeded_responses_sql SOURCE EACH: the SQL (inside the caller's transaction) that writes EACH
# responses for each participant of the table SOURCE (id, the response service's participant id;
# i, the seeded participant's number), the first EACH of the fifteen a participant may have, over
# the last 60 days, and the answer timings of those it wrote, thirty each. A timing's row is the
# negated response id: daily30's rows are not seeded (the table is made when processing first
# writes to it), and no key processing writes is negative, which the processing benchmark's check
# reads back.
seed_answers=$(python3 -c "import json; print(json.dumps(json.load(open('bench/response-30.json')), separators=(',', ':')))")

seeded_responses_sql() {
    local source=$1 each=$2
    cat <<SQL
CREATE TEMPORARY TABLE written_responses ON COMMIT DROP AS
WITH written AS (
    INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data,
                           fingerprint, status, received_at, processed_at)
    SELECT s.id, 'BENCHSTUDY', 'daily30', '1.0', 'seed-' || r,
           jsonb_build_object('activityId', 'daily30', 'version', '1.0', 'activityRunId', 'seed-' || r), '$seed_answers'::jsonb,
           'seed-' || r, 'processed', now() - (r * 37 % 5184000 || ' seconds')::interval,
           now() - (r * 37 % 5184000 || ' seconds')::interval + interval '2 seconds'
    FROM $source s CROSS JOIN generate_series(0, $each - 1) k CROSS JOIN LATERAL (SELECT s.i * 15 + k AS r) run
    ON CONFLICT (participant_id, fingerprint) DO NOTHING
    RETURNING id, participant_id, received_at
) SELECT * FROM written;
INSERT INTO response_metadata (response_id, participant_id, list_name, top_key, field_name, start_time, end_time, skipped)
SELECT r.id, r.participant_id, 'daily30', -r.id, 'q' || q, r.received_at - ((30 - q) * 20 || ' seconds')::interval,
       r.received_at - ((29 - q) * 20 || ' seconds')::interval, q % 11 = 0
FROM written_responses r CROSS JOIN generate_series(0, 29) q;
SQL
}
