-- Processing one response into the study's tables, as the response processor does it, for pgbench:
-- lock the response and read its answers, insert its rows (the daily30 row of bench/response-30.json's
-- 27 single answers and 3 date offsets, the rows of its 3 choice answers, its 30 timing rows) and set
-- its status, in one transaction. scripts/bench_processing.sh runs it with the study's schema first
-- on the search path and -D processed=<how many processed responses bench_processed numbers>; each
-- transaction picks one of them. Written out from bench/response-30.json; the script runs it once
-- first and checks that its rows equal those the processor stored for the same answers.
\set n random(1, :processed)
BEGIN;
SELECT id, participant_id, participant_number FROM bench_processed WHERE n = :n \gset
SELECT r.participant_id, p.number, r.study_key, s.study_id, r.activity_id, r.data::text
FROM responses r JOIN studies s ON s.study_key = r.study_key JOIN participants p ON p.id = r.participant_id
WHERE r.id = :id
FOR UPDATE OF r;
INSERT INTO daily30 ("ParticipantId", "q0", "q1", "q2", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11", "q12", "q14", "q15", "q16", "q17", "q18", "q19", "q20", "q21", "q22", "q24", "q25", "q26", "q27", "q28", "q29", "q6~offset", "q16~offset", "q26~offset")
VALUES (:participant_number, 0.42, 'mid', '3', true, 6, '2030-01-05T00:00:00Z', 'Slept badly after a late coffee; woke twice.', 1800, 7, 0.42, 'mid', '3', true, 6, '2030-01-05T00:00:00Z', 'Slept badly after a late coffee; woke twice.', 1800, 7, 0.42, 'mid', '3', true, 6, '2030-01-05T00:00:00Z', 'Slept badly after a late coffee; woke twice.', 1800, 7, 0, 0, 0)
RETURNING "Key" AS key \gset
INSERT INTO daily30q3 ("ParticipantId", "daily30Id", q3) VALUES (:participant_number, :key, 'tea'), (:participant_number, :key, 'water');
INSERT INTO daily30q13 ("ParticipantId", "daily30Id", q13) VALUES (:participant_number, :key, 'tea'), (:participant_number, :key, 'water');
INSERT INTO daily30q23 ("ParticipantId", "daily30Id", q23) VALUES (:participant_number, :key, 'tea'), (:participant_number, :key, 'water');
INSERT INTO response_metadata (response_id, participant_id, list_name, top_key, field_name, start_time, end_time, skipped)
VALUES
    (:id, :participant_id, 'daily30', :key, 'q0', '2030-01-05T08:00:00.000-05:00', '2030-01-05T08:00:00.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q1', '2030-01-05T08:00:01.000-05:00', '2030-01-05T08:00:01.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q2', '2030-01-05T08:00:02.000-05:00', '2030-01-05T08:00:02.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q3', '2030-01-05T08:00:03.000-05:00', '2030-01-05T08:00:03.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q4', '2030-01-05T08:00:04.000-05:00', '2030-01-05T08:00:04.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q5', '2030-01-05T08:00:05.000-05:00', '2030-01-05T08:00:05.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q6', '2030-01-05T08:00:06.000-05:00', '2030-01-05T08:00:06.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q7', '2030-01-05T08:00:07.000-05:00', '2030-01-05T08:00:07.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q8', '2030-01-05T08:00:08.000-05:00', '2030-01-05T08:00:08.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q9', '2030-01-05T08:00:09.000-05:00', '2030-01-05T08:00:09.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q10', '2030-01-05T08:00:10.000-05:00', '2030-01-05T08:00:10.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q11', '2030-01-05T08:00:11.000-05:00', '2030-01-05T08:00:11.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q12', '2030-01-05T08:00:12.000-05:00', '2030-01-05T08:00:12.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q13', '2030-01-05T08:00:13.000-05:00', '2030-01-05T08:00:13.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q14', '2030-01-05T08:00:14.000-05:00', '2030-01-05T08:00:14.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q15', '2030-01-05T08:00:15.000-05:00', '2030-01-05T08:00:15.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q16', '2030-01-05T08:00:16.000-05:00', '2030-01-05T08:00:16.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q17', '2030-01-05T08:00:17.000-05:00', '2030-01-05T08:00:17.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q18', '2030-01-05T08:00:18.000-05:00', '2030-01-05T08:00:18.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q19', '2030-01-05T08:00:19.000-05:00', '2030-01-05T08:00:19.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q20', '2030-01-05T08:00:20.000-05:00', '2030-01-05T08:00:20.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q21', '2030-01-05T08:00:21.000-05:00', '2030-01-05T08:00:21.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q22', '2030-01-05T08:00:22.000-05:00', '2030-01-05T08:00:22.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q23', '2030-01-05T08:00:23.000-05:00', '2030-01-05T08:00:23.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q24', '2030-01-05T08:00:24.000-05:00', '2030-01-05T08:00:24.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q25', '2030-01-05T08:00:25.000-05:00', '2030-01-05T08:00:25.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q26', '2030-01-05T08:00:26.000-05:00', '2030-01-05T08:00:26.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q27', '2030-01-05T08:00:27.000-05:00', '2030-01-05T08:00:27.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q28', '2030-01-05T08:00:28.000-05:00', '2030-01-05T08:00:28.500-05:00', false),
    (:id, :participant_id, 'daily30', :key, 'q29', '2030-01-05T08:00:29.000-05:00', '2030-01-05T08:00:29.500-05:00', false);
UPDATE responses SET status = 'processed', error_message = NULL, processed_at = now() WHERE id = :id;
END;
