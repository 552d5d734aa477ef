-- make bench: what the reminder sweep reads each round (RunReminderStore.claim's inner select),
-- from the copy bench/reminder-standings.sql makes: the reminders due now, oldest first, a round's
-- worth, by the partial index on remind_at.
SELECT user_id, study_id, activity_id FROM bench_reminder_standings
WHERE remind_at <= now() ORDER BY remind_at LIMIT 100;
