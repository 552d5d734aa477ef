"""The demo participant: a person using the MyStudies app in DEMOSTUDY, played through the app APIs
so the console has someone to show after `make run`. The first run signs them up (the verification
code read from the mail folder), enrolls them with one of the demo tokens, records the enrollment
and signs the consent with a PDF; every run then submits one daily check-in and reports the
activity's progress, so each run is a response arriving in the console (Response data, Charts,
the participant's page). Their account and app token are kept in .data/demo-participant.json.

Usage: scripts/demo-participant.sh (make run calls it once, when it seeds the demo).
Standard library only: it runs with the system python3.
"""
import base64
import datetime
import json
import os
import random
import subprocess
import sys
import urllib.error
import urllib.request

DATA = os.environ.get("STUDYSTACK_DATA", ".data")
REGISTRATION = os.environ.get("REGISTRATION_URL", "http://127.0.0.1:8082").rstrip("/")
RESPONSE = os.environ.get("RESPONSE_URL", "http://127.0.0.1:8083").rstrip("/")
METADATA = os.environ.get("STUDY_METADATA_URL", "http://127.0.0.1:8081").rstrip("/")
STATE = os.path.join(DATA, "demo-participant.json")
STUDY = "DEMOSTUDY"
APP = {"applicationId": "DEMOAPP", "orgId": "DEMOORG"}
# A one-page PDF as a signed consent would be (the apps render theirs from the consent's text).
PDF = (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
       b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
       b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >> endobj\n"
       b"trailer << /Root 1 0 R >>\n%%EOF\n")


def post(url, body, headers=None, refusal_ok=False):
    """The JSON reply; a refusal ends the script unless `refusal_ok` (then its JSON is returned)."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return json.load(reply)
    except urllib.error.HTTPError as error:
        text = error.read().decode()
        if refusal_ok:
            return json.loads(text or "{}")
        sys.exit(f"demo participant: {url} answered {error.code}: {text[:300]}")


def registration(call, body, session=None):
    return post(f"{REGISTRATION}/fdahpUserRegWS/{call}.api", body, {**APP, **(session or {})})


def sign_up():
    """A new account, verified, enrolled with the first unused demo token, consent signed."""
    email = "demo.participant@example.org"
    password = "Demo-Participant-1!"
    registration("register", {"emailId": email, "password": password})
    code = subprocess.run(["scripts/mail-code.sh", email], check=True, capture_output=True, text=True).stdout.strip()
    registration("verify", {"emailId": email, "code": code})
    with open(os.path.join(DATA, "demo-tokens.txt")) as tokens:
        candidates = tokens.read().split()
    for token in candidates:
        reply = post(f"{RESPONSE}/mobileappstudy-validateEnrollmentToken.api", {"studyId": STUDY, "token": token},
                     refusal_ok=True)
        if reply.get("success"):
            break
    else:
        sys.exit("demo participant: every demo token is used")
    app_token = post(f"{RESPONSE}/mobileappstudy-enroll.api",
                     {"studyId": STUDY, "token": token, "allowDataSharing": "true"})["data"]["appToken"]
    state = {"email": email, "password": password, "appToken": app_token, "runs": 0}
    session = log_in(state)
    registration("updateStudyState", {"studies": [{"studyId": STUDY, "status": "inProgress", "participantId": app_token}]}, session)
    registration("updateEligibilityConsentStatus", {
        "studyId": STUDY, "eligibility": True, "sharing": "Provided",
        "consent": {"version": consent_version(), "status": "completed", "pdf": base64.b64encode(PDF).decode()}}, session)
    return state


def consent_version():
    """The consent version the app is shown (`eligibilityConsent`, with the demo app's credential)."""
    with open(os.path.join(DATA, "secrets.env")) as secrets:
        credential = next(line.split("=", 1)[1].strip() for line in secrets if line.startswith("DEMO_IOS_CREDENTIAL="))
    request = urllib.request.Request(
        f"{METADATA}/StudyMetaData/eligibilityConsent?studyId={STUDY}",
        headers={**APP, "Authorization": "Basic " + base64.b64encode(credential.encode()).decode()})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.load(reply)["consent"]["version"]


def log_in(state):
    reply = registration("login", {"emailId": state["email"], "password": state["password"]})
    return {"userId": reply["userId"], "auth": reply["auth"]}


def check_in(state):
    """One daily check-in, with answers that vary from run to run."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000+0000")
    run = state["runs"] + 1

    def answer(key, kind, value):
        return {"resultType": kind, "key": key, "startTime": now, "endTime": now, "value": value, "skipped": False}
    results = [
        answer("sleepQuality", "scale", random.randint(3, 9)),
        answer("energy", "continuousScale", round(random.uniform(0.2, 1.0), 2)),
        answer("caffeine", "boolean", random.random() < 0.5),
        answer("notes", "text", random.choice(["Slept well", "Woke up twice", "Late night", "Felt rested"])),
        # A multiple choice: a row per choice in the child table `dailyactivities`.
        answer("activities", "textChoice", random.choice([["read"], ["screens"], ["read", "screens"]])),
    ]
    reply = post(f"{RESPONSE}/mobileappstudy-processResponse.api", {
        "type": "questionnaire", "participantId": state["appToken"],
        "metadata": {"studyId": STUDY, "activityId": "daily", "name": "daily", "version": "1.0", "activityRunId": str(run)},
        "data": {"resultType": "questionnaire", "startTime": now, "endTime": now, "results": results}})
    if not reply.get("success"):
        sys.exit(f"demo participant: the check-in was refused: {reply}")
    registration("updateActivityState", {"studyId": STUDY, "activity": [{
        "activityId": "daily", "activityVersion": "1.0", "activityRunId": str(run), "activityState": "inProgress",
        "activityRun": {"total": max(14, run), "completed": run, "missed": 0}}]}, log_in(state))
    state["runs"] = run


def main():
    if os.path.exists(STATE):
        with open(STATE) as saved:
            state = json.load(saved)
    else:
        state = sign_up()
    check_in(state)
    with open(STATE + ".new", "w") as out:
        json.dump(state, out)
    os.replace(STATE + ".new", STATE)
    print(f"demo participant {state['email']}: check-in {state['runs']} sent to {STUDY}")


if __name__ == "__main__":
    main()
