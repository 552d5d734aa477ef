-- make bench: the same rows found without an index: every standing read, as a sweep that looked
-- at each participant would (the floor such a sweep cannot go under).
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT user_id, study_id, activity_id FROM bench_reminder_standings
WHERE remind_at <= now() ORDER BY remind_at LIMIT 100;
