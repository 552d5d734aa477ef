"""An expansion of MyStudies schedules into runs, written apart from the Swift engine to check it
(docs/schedules.md gives the rules): datetime and zoneinfo for every wall clock, no code shared.

Reads one JSON case per line: {"studyZone", "participantZone", "joined", "launched", "horizon",
"platform", "anchorDay", "schedule"} (instants as seconds since 1970, anchorDay as an ISO date).
Writes one JSON line per case: [[runId, start, end or null], ...].
"""
import calendar
import json
import sys
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

UTC = timezone.utc


def instant(day, clock, zone):
    """Seconds since 1970 of a wall clock; zoneinfo's fold=0 is the rule (skipped: after the
    gap, repeated: the first)."""
    return int(datetime.combine(day, clock).replace(tzinfo=zone, fold=0).timestamp())


def wall(seconds, zone):
    return datetime.fromtimestamp(seconds, UTC).astimezone(zone).replace(tzinfo=None)


def skips(day, clock, zone):
    """Whether the zone's clocks never show this wall clock."""
    return wall(instant(day, clock, zone), zone) != datetime.combine(day, clock)


def parse_time(text):
    parts = [int(p) for p in text.split(":")]
    return time(parts[0], parts[1], parts[2] if len(parts) > 2 else 0)


def parse_date(text):
    return date.fromisoformat(text)


def add_months(moment, months):
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


LAST = time(23, 59, 59)


def anchor_day(case, s, pzone):
    """The given anchor date, else for an enrolment anchor the day they joined, in their zone."""
    if case.get("anchorDay"):
        return parse_date(case["anchorDay"])
    if s["anchor"]["source"] == "enrollmentDate":
        return wall(case["joined"], pzone).date()
    return None


def bounds(case, s, pzone, szone):
    """(start, end) instants of the activity for this participant; None when unknown/open."""
    freq = s["frequency"]
    if "anchor" in s:
        anchor = anchor_day(case, s, pzone)
        if anchor is None:
            return None
        clock = parse_time(s.get("time") or (s.get("dailyTimes") or ["00:00"])[0])
        first = datetime.combine(anchor + timedelta(days=s.get("startDays", 0)), clock)
        start = instant(first.date(), first.time(), pzone)
        if freq == "manual":
            spans = [(instant(anchor + timedelta(days=r["startDays"]), parse_time(r.get("time", "00:00")), pzone),
                      instant(anchor + timedelta(days=r["endDays"]), LAST, pzone)) for r in s["anchorRuns"]]
            return (min(a for a, _ in spans), max(b for _, b in spans))
        if freq == "ongoing":
            return (start, None)
        end = None
        if freq in ("daily", "weekly", "monthly") and s.get("repeatCount"):
            n = s["repeatCount"]
            after = {"daily": first + timedelta(days=n), "weekly": first + timedelta(weeks=n),
                     "monthly": add_months(first, n)}[freq]
            end = instant(after.date(), after.time(), pzone) - 1
        elif s.get("endDays") is not None:
            end = instant(anchor + timedelta(days=s["endDays"]), LAST, pzone)
        return (start, end)
    def at(d, t):
        return instant(parse_date(d), parse_time(t) if t else time(0), szone)
    if freq == "oneTime":
        start = case.get("launched") if s.get("launchWithStudy") else at(s["startDate"], s.get("time"))
        # The original study-metadata services end a one-time activity at 23:59:59 of its end date.
        end = None if s.get("studyLifetime") else at(s["endDate"], "23:59:59")
        return (start, end)
    if freq == "daily":
        return (at(s["startDate"], s["dailyTimes"][0]), at(s["endDate"], "23:59:59"))
    if freq in ("weekly", "monthly"):
        start = at(s["startDate"], s["time"])
        if s.get("endDate"):
            return (start, at(s["endDate"], s["time"]))
        first = wall(start, szone)
        n = s["repeatCount"]
        after = first + timedelta(weeks=n) if freq == "weekly" else add_months(first, n)
        return (start, instant(after.date(), after.time(), szone) - 1)
    if freq == "manual":
        spans = [(instant(parse_date(r["start"][:10]), parse_time(r["start"][11:]), szone),
                  instant(parse_date(r["end"][:10]), parse_time(r["end"][11:]), szone)) for r in s["runs"]]
        return (min(a for a, _ in spans), max(b for _, b in spans))
    return (case.get("launched"), None)  # ongoing


def expand(case):
    s = case["schedule"]
    pzone, szone = ZoneInfo(case["participantZone"]), ZoneInfo(case["studyZone"])
    joined, horizon, platform = case["joined"], case["horizon"], case["platform"]
    b = bounds(case, s, pzone, szone)
    if b is None:
        return []
    start, end = b
    if end is not None and end < joined:
        return []
    stop = horizon if end is None else min(horizon, end)
    begins = joined if start is None else max(start, joined)
    runs = []

    def clip(e):
        if e is None:
            return end
        return e if end is None else min(e, end)

    def android_joined(a):
        """Android gives a run open when the participant joined their joining as its start."""
        return max(a, joined) if platform == "android" else a

    freq = s["frequency"]
    if freq in ("oneTime", "ongoing"):
        # Android's one-time run starts at the activity's start, joined late or not.
        first = start if (freq == "oneTime" and platform == "android" and start is not None) else begins
        if begins < stop:
            runs.append([1, first, end])
    elif freq == "daily":
        times = [parse_time(t) for t in s["dailyTimes"]]
        windows = []
        for i, t in enumerate(times):
            if i + 1 < len(times):
                nxt = datetime.combine(date(2000, 1, 1), times[i + 1]) - timedelta(seconds=1)
                windows.append((t, nxt.time()))
            else:
                windows.append((t, LAST))
        # A timeout ends each window sooner, within its day.
        if s.get("expiresAfterMilliseconds"):
            seconds = min(max(s["expiresAfterMilliseconds"] // 1000, 1), 86400)
            clipped = []
            for ws, we in windows:
                latest = datetime.combine(date(2000, 1, 1), ws) + timedelta(seconds=seconds - 1)
                if latest.date() == date(2000, 1, 1) and latest.time() < we:
                    we = latest.time()
                clipped.append((ws, we))
            windows = clipped
        day = wall(begins, pzone).date()
        number = 1
        while True:
            for ws, we in windows:
                a, z = instant(day, ws, pzone), instant(day, we, pzone)
                if z < begins:
                    continue
                if a >= stop:
                    return runs
                skipped = skips(day, ws, pzone) and skips(day, we, pzone)
                if not skipped:
                    runs.append([number, android_joined(a), clip(z)])
                number += 1
            day += timedelta(days=1)
    elif freq == "weekly":
        if start is None:
            return []
        origin = wall(start, pzone)
        first = origin
        if joined > start:
            j = wall(joined, pzone).date()
            target = (origin.date().isoweekday()) % 7  # 0 = Sunday
            if platform == "ios":
                # iOS: the activity's weekday in the Sunday-to-Saturday week of joining, at the
                # time of day of joining.
                sunday = j - timedelta(days=j.isoweekday() % 7)
                first = datetime.combine(sunday + timedelta(days=target), wall(joined, pzone).time())
            else:
                back = (j.isoweekday() % 7 - target) % 7
                day = j - timedelta(days=back)
                if day > origin.date():
                    first = datetime.combine(day, origin.time())
        number = 1
        k = first
        while True:
            a = instant(k.date(), k.time(), pzone)
            if a >= stop:
                return runs
            nk = k + timedelta(days=7)
            runs.append([number, android_joined(a), clip(instant(nk.date(), nk.time(), pzone) - 1)])
            number += 1
            k = nk
    elif freq == "monthly" and platform == "ios":
        origin = wall(begins, pzone)
        m = 0
        while True:
            a_wall, z_wall = add_months(origin, m), add_months(origin, m + 1)
            a = instant(a_wall.date(), a_wall.time(), pzone)
            if a >= stop:
                return runs
            z = instant(z_wall.date(), z_wall.time(), pzone) - 1
            runs.append([m + 1, a, clip(z)])
            m += 1
    elif freq == "monthly":
        if start is None:
            return []
        current = wall(start, pzone)
        start_day = current.day
        ends_31 = end is not None and wall(end, pzone).day == 31
        number = 1
        while True:
            a = instant(current.date(), current.time(), pzone)
            if a >= stop:
                return runs
            nxt = android_month_after(current, start_day, ends_31)
            z = instant(nxt.date(), nxt.time(), pzone) - 1
            if z >= joined:
                runs.append([number, a, clip(z)])
            number += 1
            current = nxt
    elif freq == "manual":
        if "anchor" in s:
            anchor = anchor_day(case, s, pzone)
            spans = [(instant(anchor + timedelta(days=r["startDays"]), parse_time(r.get("time", "00:00")), pzone),
                      instant(anchor + timedelta(days=r["endDays"]), LAST, pzone)) for r in s["anchorRuns"]]
        else:
            spans = [(instant(parse_date(r["start"][:10]), parse_time(r["start"][11:]), szone),
                      instant(parse_date(r["end"][:10]), parse_time(r["end"][11:]), szone)) for r in s["runs"]]
        number = 1
        for a, z in spans:
            if z < joined or not a < z or (end is not None and a >= end):
                continue
            if a < stop:
                runs.append([number, android_joined(a), clip(z)])
            number += 1
    return runs


def lenient(year, month, day):
    """java.util.Calendar's lenient date: a day past the month's end counts on into the next."""
    return date(year, month, 1) + timedelta(days=day - 1)


def android_month_after(current, start_day, ends_31):
    """The next monthly start in the Android app (SurveyScheduler.setMonthlyRun)."""
    if current.month == 2 and current.day in (28, 29):
        return datetime.combine(lenient(current.year, 2, 58 if current.day == 28 else 59), current.time())
    if ends_31 and current.month in (4, 6, 9, 11):
        return datetime.combine(lenient(current.year, current.month, 60), current.time())
    rolled = datetime.combine(lenient(current.year, current.month, start_day), current.time())
    return add_months(rolled, 1)


out = []
for line in sys.stdin.read().splitlines():
    if line.strip():
        out.append(json.dumps(expand(json.loads(line))))
print("\n".join(out))
