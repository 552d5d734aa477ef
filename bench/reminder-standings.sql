-- make bench: the reminder sweep's table at the scale of a study of 100,000 participants in two
-- activities: a copy of participant_activity_standings with its indexes (the partial index on
-- remind_at among them), 200,000 rows, of which 1% have a reminder due now, 9% one planned
-- later today, the rest none (done, not due, or no reminder set). A copy, so the running
-- registration service's own sweep never sees these rows.
DROP TABLE IF EXISTS bench_reminder_standings;
SELECT setseed(0.2026);
CREATE TABLE bench_reminder_standings (LIKE participant_activity_standings INCLUDING DEFAULTS INCLUDING INDEXES);
INSERT INTO bench_reminder_standings (user_id, study_id, activity_id, runs_opened, runs_completed, runs_missed, runs_expired,
    missed_in_a_row, due_run_id, due_since, due_until, next_run_at, last_completed_at, remind_run_id, remind_at)
SELECT gen_random_uuid(), 'BENCHSTUDY', a.activity, 300, 250, 50, 0, (random() * 3)::int,
       d.run, now() - interval '1 hour', now() + interval '11 hours', now() + interval '12 hours', now() - interval '1 day',
       CASE WHEN d.draw < 0.10 THEN d.run END,
       CASE WHEN d.draw < 0.01 THEN now() - random() * interval '30 minutes'
            WHEN d.draw < 0.10 THEN now() + random() * interval '12 hours' END
FROM generate_series(1, 100000) AS i
CROSS JOIN (VALUES ('daily'), ('weekly')) AS a (activity)
CROSS JOIN LATERAL (SELECT random() AS draw, 300 + i % 7 AS run) AS d;
ANALYZE bench_reminder_standings;
