"""Writes a realistic benchmark study document: 20 activities of 10 steps each (200 steps),
mixing every response type, and `daily30` (30 questions) that the response benchmark answers, for `make bench`.
`daily30` runs now (from 90 days ago, past the seeded enrolments, to a year ahead) at 08:00 and 20:00, with
a reminder, so the participants' standings have runs to count and reminders to plan; the other twenty open in 2030."""
import datetime
import json
import sys

TYPES = [
    ("scale", {"minValue": 0, "maxValue": 10, "step": 1, "default": 5, "minDesc": "Low", "maxDesc": "High"}),
    ("continuousScale", {"minValue": 0, "maxValue": 1, "maxFractionDigits": 2}),
    ("textScale", {"textChoices": [{"text": t, "value": t.lower()} for t in ("Low", "Mid", "High")]}),
    ("valuePicker", {"textChoices": [{"text": str(n), "value": str(n)} for n in range(5)]}),
    ("textChoice", {"selectionStyle": "Multiple", "textChoices": [{"text": t, "value": t.lower()} for t in ("Tea", "Coffee", "Water", "None")]}),
    ("boolean", None),
    ("numeric", {"style": "Integer", "unit": "hours", "minValue": 0, "maxValue": 24}),
    ("date", {"style": "Date"}),
    ("text", {"maxLength": 500, "multipleLines": True}),
    ("timeInterval", {"default": 900, "step": 5}),
]


def activity(index):
    steps = []
    for step_index in range(10):
        result_type, fmt = TYPES[(index + step_index) % len(TYPES)]
        step = {"type": "question", "resultType": result_type, "key": f"q{step_index}",
                "title": {"en": f"Question {step_index} of activity {index}", "es": f"Pregunta {step_index}"},
                "text": "Please answer as accurately as you can.", "skippable": step_index % 3 == 0}
        if fmt is not None:
            step["format"] = fmt
        steps.append(step)
    return {"activityId": f"a{index}", "title": {"en": f"Activity {index}", "es": f"Actividad {index}"},
            "schedule": {"frequency": "daily", "startDate": "2030-01-01", "endDate": "2030-12-31", "dailyTimes": ["08:00", "20:00"]},
            "steps": steps}


def daily30():
    """The activity `make bench` submits responses to: 30 questions of every type."""
    result = activity(21)
    result["activityId"] = "daily30"
    result["title"] = {"en": "Daily check-in", "es": "Control diario"}
    today = datetime.datetime.now(datetime.timezone.utc).date()
    result["schedule"] = dict(result["schedule"], startDate=(today - datetime.timedelta(days=90)).isoformat(),
                              endDate=(today + datetime.timedelta(days=365)).isoformat())
    # Reminded like a study's daily check-in: within an hour and a half of each run opening, twice a
    # day at most, so the reminder sweep has a study's share of decisions to make.
    result["reminder"] = {"afterMinutes": 30, "randomMinutes": 60, "maxPerDay": 2}
    result["steps"] = [dict(step, key=f"q{i}") for i, step in
                       enumerate(activity(21)["steps"] + activity(31)["steps"] + activity(41)["steps"])]
    return result


document = {
    "studyId": "BENCHSTUDY", "appId": "BENCHAPP", "name": {"en": "Benchmark study", "es": "Estudio de referencia"},
    "category": "Benchmark", "sponsor": "StudyStack", "tagline": "Load test", "timeZone": "America/New_York",
    "languages": ["en", "es"], "eligibility": {"type": "token"},
    "consent": {"visualScreens": [{"type": "overview", "title": "Overview", "text": "About this study."}]},
    "activities": [activity(i) for i in range(1, 21)] + [daily30()],
}
json.dump(document, sys.stdout)
