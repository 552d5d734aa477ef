"""Writes the demo study DEMOSTUDY that `make run` seeds once (scripts/seed-demo.sh).

It is built from docs/examples/complete-study.json (which the test suite validates on every run)
so that it shows what a real study has: token eligibility, a consent with a comprehension test,
a daily questionnaire with every response type and a form step, an active task, a weekly
questionnaire anchored to enrollment, resources and a dashboard with statistics and a chart.
The absolute schedules start yesterday and end in a year, so a participant who enrolls today
finds the daily activities open.
"""
import datetime
import json
import pathlib
import sys

example_path = pathlib.Path(__file__).resolve().parent.parent / "docs" / "examples" / "complete-study.json"
example = json.loads(example_path.read_text())
activities = {activity["activityId"]: activity for activity in example["activities"]}

today = datetime.datetime.now(datetime.timezone.utc).date()
start = (today - datetime.timedelta(days=1)).isoformat()
end = (today + datetime.timedelta(days=365)).isoformat()


def running_now(activity):
    """The activity with its absolute schedule moved to [yesterday, a year from now]."""
    activity = json.loads(json.dumps(activity))
    activity["schedule"]["startDate"] = start
    activity["schedule"]["endDate"] = end
    return activity


document = {
    "studyId": "DEMOSTUDY",
    "appId": "DEMOAPP",
    "name": {"en": "StudyStack demo study", "es": "Estudio de demostración de StudyStack"},
    "category": "Demo",
    "sponsor": "StudyStack",
    "tagline": "Try every part of the platform",
    "description": "A study made by make run: sign up, enroll with a token from .data/demo-tokens.txt, "
                   "answer the daily check-in and read your answers back.",
    "website": "https://studystack.example.org/demo",
    "logo": "https://studystack.example.org/demo/logo.png",
    "overview": example["overview"],
    "platforms": ["ios", "android"],
    "enrolling": True,
    "rejoin": {"allowed": True, "message": "Welcome back."},
    "withdrawal": example["withdrawal"],
    "timeZone": "America/New_York",
    "languages": ["en", "es"],
    "eligibility": {
        "type": "token",
        "tokenTitle": "Enter an enrollment token from .data/demo-tokens.txt",
        "failureText": "That token is not valid for this study.",
    },
    "consent": example["consent"],
    "activities": [
        running_now(activities["daily"]),    # every response type, a form step, branching
        activities["weekly"],                # weekly, anchored to the enrollment date
        running_now(activities["kicks"]),    # the fetal kick counter active task
    ],
    "resources": example["resources"],
    "notifications": [
        {"notificationId": "welcome", "subtype": "Announcement", "text": "Welcome to the StudyStack demo study!",
         "timing": "immediate"},
        {"notificationId": "weeklyReminder", "subtype": "Activity", "activityId": "weekly",
         "text": "Your weekly survey is open.", "timing": "anchorRelative", "anchor": {"source": "enrollmentDate"},
         "anchorDays": 7, "time": "09:00"},
    ],
    "dashboard": example["dashboard"],
}
json.dump(document, sys.stdout, ensure_ascii=False, indent=2)
sys.stdout.write("\n")
