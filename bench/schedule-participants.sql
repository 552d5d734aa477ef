-- make bench: 100,000 participants for the schedule expansion beside PostgreSQL
-- (bench/schedule-expansion.sql): enrolments through 2026, the zones of schedule-bench's draw
-- (three in eight Melbourne), from a fixed seed.
DROP TABLE IF EXISTS bench_schedule_participants;
SELECT setseed(0.2026);
CREATE TABLE bench_schedule_participants AS
SELECT i AS id,
       (ARRAY['Australia/Melbourne', 'Australia/Melbourne', 'Australia/Melbourne', 'Australia/Brisbane', 'Australia/Perth',
              'Australia/Lord_Howe', 'Pacific/Auckland', 'Europe/London'])[1 + floor(random() * 8)::int] AS zone,
       timestamptz '2026-01-01 00:00:00+00' + random() * interval '365 days' AS joined
FROM generate_series(1, 100000) AS i;
ANALYZE bench_schedule_participants;
