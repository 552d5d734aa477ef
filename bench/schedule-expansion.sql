-- make bench: schedule-bench's expansion done by PostgreSQL: for each participant, a year of a
-- daily activity's windows (08:00 to 19:59:59 and 20:00 to 23:59:59 on their clock, from the day
-- they joined, those that ended before they joined left out) and 52 weekly runs from their
-- enrolment day at 09:00, each start and end an instant of a wall clock in their zone.
SELECT count(*) FROM (
    SELECT (d + w.opens) AT TIME ZONE p.zone AS starts, (d + w.closes) AT TIME ZONE p.zone AS ends
    FROM bench_schedule_participants p
    CROSS JOIN LATERAL generate_series(
        date_trunc('day', p.joined AT TIME ZONE p.zone), date_trunc('day', p.joined AT TIME ZONE p.zone) + interval '364 days',
        interval '1 day') AS d
    CROSS JOIN (VALUES (time '08:00', time '19:59:59'), (time '20:00', time '23:59:59')) AS w (opens, closes)
    WHERE (d + w.closes) AT TIME ZONE p.zone >= p.joined
    UNION ALL
    SELECT (d + time '09:00') AT TIME ZONE p.zone, (d + interval '7 days' + time '09:00') AT TIME ZONE p.zone - interval '1 second'
    FROM bench_schedule_participants p
    CROSS JOIN LATERAL generate_series(
        date_trunc('day', p.joined AT TIME ZONE p.zone), date_trunc('day', p.joined AT TIME ZONE p.zone) + interval '357 days',
        interval '7 days') AS d
) AS runs;
