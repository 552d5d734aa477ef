"""The console in a real browser: headless Chromium driven by selenium, against the running
platform (scripts/platform-test.sh starts it). An admin signs in with the credentials make run
prints, creates a study through the forms only, edits its sections, sees a refused save explained
at the field, launches the study and publishes an update; a viewer, invited and given the role in
the console, sees no control and is refused a crafted POST; a batch of 500 enrollment tokens is made,
its CSV checked and its QR sheet read back with zbarimg; a site is added and three people invited
from a CSV file (each e-mail's token and QR code read), one revoked and refused at enrollment, and a
CSV with a bad line refused whole; a FHIR API client registered with its keys file, signing in with
them, and revoked; an invited participant signs up, enrolls with their token and
signs the consent with a PDF, and the console shows them at their site and serves the same bytes
(a viewer sees no address and no PDF); responses submitted as the apps do appear in the data grid,
sorted and filtered there, a response for an unpublished version fails and is processed again
from the console once the version is published, the exports hold the rows, and the charts' SVG
shows the counts; a POST without the form token and a
cookie altered by one byte are refused; push keys are uploaded as files; a study moved in from
a MyStudies deployment's recorded replies, dry run then import; signing out ends the
token, so the old cookie opens nothing. What the forms saved is read back from the admin API and
the app API, so the test checks what an app would be served, not what the page shows.

Environment: CONSOLE_URL, STUDY_METADATA_URL, REGISTRATION_URL, RESPONSE_URL, MAIL_DIR (registration's mail folder),
ADMIN_EMAIL, ADMIN_PASSWORD, SCREENSHOTS (a folder),
APP_CREDENTIAL (the demo app's iOS `key:token`, to read the launched study as the app does).
"""
import base64
import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

import accessibility
import jwt
from cryptography.hazmat.primitives import serialization
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

# The Save bar stays at the foot of a long page (sticky), over whatever scrolls beneath it. A
# person scrolls a control out from under it before pressing; selenium clicks a control whose
# centre is anywhere in the window, so every click first scrolls its control to the middle.
_click = WebElement.click


def _click_in_view(element):
    element.parent.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'nearest'})", element)
    _click(element)


WebElement.click = _click_in_view

CONSOLE = os.environ["CONSOLE_URL"].rstrip("/")
METADATA = os.environ["STUDY_METADATA_URL"].rstrip("/")
EMAIL = os.environ["ADMIN_EMAIL"]
PASSWORD = os.environ["ADMIN_PASSWORD"]
SHOTS = os.environ["SCREENSHOTS"]
MAIL_DIR = os.environ["MAIL_DIR"]
RESPONSE = os.environ["RESPONSE_URL"].rstrip("/")
STUDY = "BROWSER1"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def browser():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--lang=en-US"):
        options.add_argument(argument)
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


def wait(driver, condition, what, seconds=15):
    """A poll with a deadline: the condition, or a failure that says what never happened."""
    try:
        # A page being replaced can answer for a moment from a document that is going away
        # (stale, or "does not belong to the document"): asked again at the next poll.
        return WebDriverWait(driver, seconds, poll_frequency=0.1, ignored_exceptions=(WebDriverException,)).until(condition)
    except Exception as error:
        shot(driver, "failure")
        raise AssertionError(f"{what} (after {seconds} s, at {driver.current_url}): {type(error).__name__} {error}")


def gone(element):
    """The page that held `element` has been replaced (Chromium reports a node of a page that
    is gone either as stale or as not belonging to the document)."""
    def check(_driver):
        try:
            element.is_enabled()
            return False
        except (StaleElementReferenceException, WebDriverException):
            return True
    return check


def shot(driver, name):
    """A screenshot of the whole page (the window grown to the page's height); every page shown
    is checked by axe-core too (reported at the end: accessibility.report)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, max(900, min(height, 4000)))
    driver.save_screenshot(os.path.join(SHOTS, f"{name}.png"))
    driver.set_window_size(1280, 900)
    if name != "failure":
        accessibility.check(driver, name)


def page_kind(path, cookie):
    """The status and content type of a console GET, without following a redirect."""
    request = urllib.request.Request(CONSOLE + path, headers={"Cookie": cookie})
    try:
        reply = urllib.request.build_opener(NoRedirect).open(request)
        return reply.status, reply.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", "")


def fill(driver, element_id, text):
    field = driver.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(text)


def api_draft(study):
    """The draft as the admin API serves it, read with a token of its own."""
    login = urllib.request.Request(
        f"{METADATA}/admin/v1/login", data=json.dumps({"email": EMAIL, "password": PASSWORD}).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    token = json.load(urllib.request.urlopen(login))["token"]
    request = urllib.request.Request(f"{METADATA}/admin/v1/studies/{study}/draft", headers={"Authorization": f"Bearer {token}"})
    return json.load(urllib.request.urlopen(request))


def app_request(call, credential=None):
    """A WCP request as the MyStudies app makes it (`call`: the name and its query), with the
    demo app's credential or another `key:token` (a test build's)."""
    encoded = base64.b64encode((credential or os.environ["APP_CREDENTIAL"]).encode()).decode()
    return urllib.request.Request(
        f"{METADATA}/StudyMetaData/{call}",
        headers={"Authorization": f"Basic {encoded}", "applicationId": "DEMOAPP", "orgId": "DEMOORG"})


def app_call(name, study):
    """A WCP call as the MyStudies app makes it, with the demo app's credential."""
    return json.load(urllib.request.urlopen(app_request(f"{name}?studyId={study}")))


def app_updates(study, version):
    """`studyUpdates` as the app asks it: what changed since the version it holds."""
    return json.load(urllib.request.urlopen(app_request(f"studyUpdates?studyId={study}&studyVersion={version}")))


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def raw(method, path, cookie, fields=None):
    """A request made by a script, not the browser (a crafted POST, a replayed or altered
    cookie): the status, the Location and the page, without following a redirect."""
    data = urllib.parse.urlencode(fields).encode() if fields is not None else None
    request = urllib.request.Request(CONSOLE + path, data=data, method=method, headers={"Cookie": cookie})
    if data is not None:
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        reply = urllib.request.build_opener(NoRedirect).open(request)
        return reply.status, reply.headers.get("Location"), reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location"), error.read().decode()


def download(url, cookie):
    """A file the page links to, fetched with the browser's session cookie."""
    request = urllib.request.Request(url, headers={"Cookie": cookie})
    with urllib.request.urlopen(request) as reply:
        assert reply.status == 200, reply.status
        return reply.read()


def token_is_valid(token):
    """An enrollment token's check letter: Luhn mod 26, from the right, factors 1 and 2, each
    product's base-26 digits summed."""
    if not token.isascii() or not token.isalpha() or not token.isupper():
        return False
    total, factor = 0, 1
    for letter in reversed(token):
        product = factor * (ord(letter) - 65)
        total += product // 26 + product % 26
        factor = 1 if factor == 2 else 2
    return total % 26 == 0


def qr_codes(pdf):
    """What every QR code on the PDF's pages says: pages rendered by pdftoppm, read by zbarimg."""
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "sheet.pdf")
    with open(path, "wb") as out:
        out.write(pdf)
    subprocess.run(["pdftoppm", "-r", "100", "-gray", "-png", path, os.path.join(folder, "page")], check=True)
    pages = sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".png"))
    read = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", *pages], check=True,
                          capture_output=True, text=True).stdout
    return read.split()


def mail_messages():
    """The finished messages in the mail folder, newest first: each is written as a hidden file and
    then renamed to its `.eml` name, so a file seen while listing may be gone when read."""
    import email as mime
    for name in sorted(os.listdir(MAIL_DIR), reverse=True):
        if not name.endswith(".eml") or name.startswith("."):
            continue
        try:
            with open(os.path.join(MAIL_DIR, name), "rb") as eml:
                yield mime.message_from_bytes(eml.read())
        except FileNotFoundError:
            continue


def invitation_token(email, seconds=30):
    """The token in the newest invitation e-mail to `email` in the mail folder, waiting for the mail
    worker; and the QR code in the same e-mail must read as that token."""
    import re
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for message in mail_messages():
            if message["To"] != email or "invitation" not in (message["Subject"] or ""):
                continue
            text = next(part for part in message.walk() if part.get_content_type() == "text/plain").get_payload(decode=True).decode()
            token = re.search(r"enter ([A-Z]{9}) or scan", text).group(1)
            image = next(part for part in message.walk() if part.get_content_type() == "image/png").get_payload(decode=True)
            path = os.path.join(tempfile.mkdtemp(), "qr.png")
            with open(path, "wb") as out:
                out.write(image)
            read = subprocess.run(["zbarimg", "--quiet", "--raw", path], check=True, capture_output=True, text=True).stdout.split()
            assert read == [token], (read, token)
            return token
        time.sleep(0.2)
    raise AssertionError(f"no invitation e-mail to {email} within {seconds} s")


def labkey(call, token, study=STUDY):
    body = json.dumps({"studyId": study, "token": token, "allowDataSharing": "true"}).encode()
    request = urllib.request.Request(f"{RESPONSE}/{call}", data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as reply:
            return json.load(reply)
    except urllib.error.HTTPError as error:
        return json.load(error)


def enroll(token, study=STUDY):
    return labkey("mobileappstudy-enroll.api", token, study)


def validate(token, study=STUDY):
    return labkey("mobileappstudy-validateEnrollmentToken.api", token, study)


def admin_api(method, path, body=None):
    """A call to the admin API with a token of its own (what a script with curl would do)."""
    login = urllib.request.Request(
        f"{METADATA}/admin/v1/login", data=json.dumps({"email": EMAIL, "password": PASSWORD}).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    token = json.load(urllib.request.urlopen(login))["token"]
    request = urllib.request.Request(
        f"{METADATA}{path}", data=body.encode() if body is not None else None, method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as reply:
        return reply.status


def listed(credential):
    """The study ids `studyList` gives an app built with `credential` (its `key:token`)."""
    return [study["studyId"] for study in json.load(urllib.request.urlopen(app_request("studyList", credential)))["studies"]]


def app_status(name, study, credential):
    """The HTTP status of a WCP call about `study` by an app built with `credential`."""
    try:
        with urllib.request.urlopen(app_request(f"{name}?studyId={study}", credential)) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code


def act(driver, action, what, confirm=False):
    """Takes a lifecycle action from the study's actions page (ticking the confirmation first
    when it asks for one) and waits for its "Done" notice."""
    form = driver.find_element(By.XPATH, f"//input[@name='action'][@value='{action}']/ancestor::form")
    if confirm:
        form.find_element(By.NAME, "confirm").click()
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Done: "), what)


def session_cookie(driver):
    cookie = next(c for c in driver.get_cookies() if c["name"].endswith("studystack_session"))
    return cookie["name"], cookie["value"]


def sign_in(driver, email, password, what):
    driver.get(CONSOLE + "/signin")
    wait(driver, EC.presence_of_element_located((By.ID, "email")), f"the sign-in form for {what}")
    fill(driver, "email", email)
    fill(driver, "password", password)
    driver.find_element(By.CSS_SELECTOR, "form[action='/signin'] button[type=submit]").click()
    wait(driver, EC.title_contains("Studies"), f"the studies list after {what} signs in")


def app_activity(study, activity):
    return json.load(urllib.request.urlopen(app_request(f"activity?studyId={study}&activityId={activity}&activityVersion=1.0")))


def save(driver, what):
    page = driver.find_element(By.CSS_SELECTOR, "main")
    driver.find_element(By.CSS_SELECTOR, "form button.primary[type=submit]").click()
    wait(driver, gone(page), f"the page after saving {what}")
    wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Saved"), f"the saved notice on {what}")


def press(driver, op):
    """A row button (add, remove, up, down). "Add" puts the new row on the page at once (the
    page's script, from the row drawn for it): the list's count goes up by one, no round trip.
    The others send the page, which comes back with the rows changed."""
    if op.startswith("add "):
        count = f"input[type=hidden][name='{op[4:]}#count']"
        before = int(driver.find_element(By.CSS_SELECTOR, count).get_attribute("value"))
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, f"button[name=op][value='{op}']").click()
        wait(driver, lambda d: int(d.find_element(By.CSS_SELECTOR, count).get_attribute("value")) == before + 1, f"the row added by {op}")
        assert not gone(page)(driver), f"{op} sent the page instead of adding the row on it"
        return
    page = driver.find_element(By.CSS_SELECTOR, "main")
    driver.find_element(By.CSS_SELECTOR, f"button[name=op][value='{op}']").click()
    wait(driver, gone(page), f"the page after {op}")
    wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "The rows changed on this page only"), f"the page after {op}")


def choose(driver, select_id, value):
    """Chooses in a select that shows other fields for each choice: the script submits the page
    (without saving) and it comes back with the chosen case's fields."""
    select = driver.find_element(By.ID, select_id)
    if Select(select).first_selected_option.get_attribute("value") == value:
        return  # already chosen: its fields are on the page
    Select(select).select_by_value(value)
    wait(driver, gone(select), f"the page after choosing {value} in {select_id}")
    wait(driver, EC.presence_of_element_located((By.ID, select_id)), f"{select_id} again")


# One question of each of the 15 response types, with the format fields each needs.
RESPONSE_TYPES = [
    ("scale", {"format-minValue": "0", "format-maxValue": "10", "format-step": "1", "format-default": "5"}, []),
    ("continuousScale", {"format-minValue": "0", "format-maxValue": "1", "format-maxFractionDigits": "2"}, []),
    ("textScale", {}, [("format/textChoices", ["text-en", "value"])]),
    ("valuePicker", {}, [("format/textChoices", ["text-en", "value"])]),
    ("imageChoice", {}, [("format/imageChoices", ["image", "selectedImage", "text-en", "value"])]),
    ("textChoice", {}, [("format/textChoices", ["text-en", "value"])]),
    ("boolean", {}, []),
    ("numeric", {"format-unit-en": "cups", "format-minValue": "0", "format-maxValue": "20"}, []),
    ("timeOfDay", {}, []),
    ("date", {}, []),
    ("text", {"format-maxLength": "200", "format-placeholder-en": "A few words"}, []),
    ("email", {}, []),
    ("timeInterval", {"format-step": "5"}, []),
    ("height", {}, []),
    ("location", {}, []),
]
SELECTS = {"numeric": ("format-style", "Integer"), "date": ("format-style", "Date"), "textChoice": ("format-selectionStyle", "Single"),
           "height": ("format-measurementSystem", "Metric")}


REGISTRATION = os.environ["REGISTRATION_URL"].rstrip("/")


def registration(call, body, user=None):
    """A registration call as the MyStudies app makes it (`user`: its userId and auth)."""
    headers = {"applicationId": "DEMOAPP", "orgId": "DEMOORG", "Content-Type": "application/json"}
    if user:
        headers.update({"userId": user["userId"], "auth": user["auth"]})
    request = urllib.request.Request(f"{REGISTRATION}/fdahpUserRegWS/{call}.api", data=json.dumps(body).encode(),
                                     method="POST", headers=headers)
    with urllib.request.urlopen(request) as reply:
        return json.load(reply)


def verification_code(address, seconds=15):
    """The newest sign-up code e-mailed to `address`, waiting for the mail worker."""
    import re
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for message in mail_messages():
            if message["To"] != address:
                continue
            for part in message.walk():
                if part.get_content_type() == "text/plain":
                    found = re.search(r"code is (\w+)", part.get_payload(decode=True).decode())
                    if found:
                        return found.group(1)
        time.sleep(0.2)
    raise AssertionError(f"no verification code for {address} within {seconds} s")


def submit(app_token, activity, version, results):
    """`processResponse` as the apps send it."""
    body = {"type": "SurveyResponse", "participantId": app_token,
            "metadata": {"activityId": activity, "version": version, "activityRunId": "1"},
            "data": {"startTime": "2026-11-25T08:00:00.000+0000", "endTime": "2026-11-25T08:01:00.000+0000", "results": results}}
    request = urllib.request.Request(f"{RESPONSE}/mobileappstudy-processResponse.api", data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as reply:
        assert json.load(reply).get("success") is True


def answers(cups, words, rested):
    """Three of the daily questionnaire's answers: q8 (numeric), q11 (text), q7 (boolean)."""
    def result(key, kind, value):
        return {"key": key, "resultType": kind, "value": value, "skipped": False,
                "startTime": "2026-11-25T08:00:00.000+0000", "endTime": "2026-11-25T08:00:10.000+0000"}
    return [result("q8", "numeric", cups), result("q11", "text", words), result("q7", "boolean", rested)]


def column(driver, name):
    """The grid's cells of one column, top to bottom."""
    headings = [th.get_attribute("data-column") for th in driver.find_elements(By.CSS_SELECTOR, "#grid thead th")]
    index = headings.index(name)
    return [row.find_elements(By.TAG_NAME, "td")[index].text for row in driver.find_elements(By.CSS_SELECTOR, "#grid tbody tr")]


def chart_marks(driver, chart, tag):
    """What a chart's marks say: (series, label, value) from their data attributes."""
    marks = []
    for mark in driver.find_elements(By.CSS_SELECTOR, f"svg#{chart} {tag}[data-value]"):
        series = mark.find_element(By.XPATH, "ancestor::*[@data-series][1]").get_attribute("data-series")
        marks.append((series, mark.get_attribute("data-label"), int(mark.get_attribute("data-value"))))
    return marks


PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n% signed by Ben in the browser journey\n%%EOF\n"


def retitle_and_publish(driver, title):
    """The questionnaire "daily" retitled on its page, then "Publish updates" on the actions page:
    a new version of it."""
    driver.get(CONSOLE + f"/studies/{STUDY}/activities/daily")
    wait(driver, EC.presence_of_element_located((By.ID, "f-activities-0-title-en")), "the questionnaire's page")
    fill(driver, "f-activities-0-title-en", title)
    save(driver, f"the questionnaire titled {title}")
    driver.find_element(By.LINK_TEXT, "Actions and versions").click()
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=action][value=publish-updates]")), "the update action")
    driver.find_element(By.XPATH, "//input[@value='publish-updates']/ancestor::form//button").click()
    # What changes for participants is shown first, and confirmed.
    wait(driver, EC.presence_of_element_located((By.ID, "publish-preview")), "what publishing changes")
    preview = driver.find_element(By.ID, "publish-preview").text
    assert "Changed activities get a new version" in preview and title in preview, preview
    assert not driver.find_elements(By.NAME, "reconsent"), "no consent change, so no re-consent choice"
    driver.find_element(By.XPATH, "//section[@id='publish-preview']//button").click()
    wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Done: publish updates."), f"the update titled {title}")


def signed_consent(user):
    """The version of the newest consent registration holds for `user` (`consentPDF`, as the
    Android app asks it before deciding whether to show the consent again)."""
    headers = {"applicationId": "DEMOAPP", "orgId": "DEMOORG", "userId": user["userId"], "auth": user["auth"]}
    request = urllib.request.Request(f"{REGISTRATION}/fdahpUserRegWS/consentPDF.api?studyId={STUDY}&consentVersion=", headers=headers)
    with urllib.request.urlopen(request) as reply:
        return json.load(reply)["consent"]["version"]


def consent_change(driver, ben_user, spare_token, signed_version):
    """A consent change after launch, published with re-consent. Ben (the iOS app) signed the
    first version; Dee (the Android app) joins with a token of the batch and signs it too. The
    preview before publishing says the consent changes and asks whether those who signed must
    sign again; both apps are then told, the participants table shows who owes the signature,
    the reminders go out (Dee's to her phone, Ben's nowhere: his app never turned notifications
    on), both sign the new
    version as their apps do, and the consent history has every signature."""
    import datetime
    android = os.environ["ANDROID_CREDENTIAL"]
    dee = "dee@browser.test"
    registration("register", {"emailId": dee, "password": "Dee-Passw0rd!"})
    registration("verify", {"emailId": dee, "code": verification_code(dee)})
    dee_user = registration("login", {"emailId": dee, "password": "Dee-Passw0rd!"})
    dee_token = enroll(spare_token)["data"]["appToken"]
    registration("updateStudyState", {"studies": [{"studyId": STUDY, "status": "inProgress", "participantId": dee_token}]}, dee_user)
    registration("updateEligibilityConsentStatus", {
        "studyId": STUDY, "eligibility": True, "sharing": "Provided",
        "consent": {"version": signed_version, "status": "completed", "pdf": base64.b64encode(PDF).decode()}}, dee_user)
    registration("updateUserProfile", {
        "settings": {"remoteNotifications": True, "localNotifications": True, "touchId": False, "passcode": False,
                     "reminderLeadTime": "00:00", "locale": ""},
        "info": {"appVersion": "1.0", "os": "android", "deviceToken": "fcm-dee:" + "Ab9_" * 30}, "participantInfo": []}, dee_user)
    held = next(s["studyVersion"] for s in json.load(urllib.request.urlopen(app_request("studyList")))["studies"]
                if s["studyId"] == STUDY)

    # The consent's first section says more; publishing shows what changes and asks.
    driver.get(CONSOLE + f"/studies/{STUDY}/consent")
    wait(driver, EC.presence_of_element_located((By.ID, "f-consent-visualScreens-0-text-en")), "the consent page")
    fill(driver, "f-consent-visualScreens-0-text-en", "What we ask of you, and who sees your answers.")
    save(driver, "the consent's new text")
    # The signed document as the participant will read it, before it goes out: the preview PDF.
    link = driver.find_element(By.PARTIAL_LINK_TEXT, "Preview the signed document (PDF), English")
    pdf = download(link.get_attribute("href"), "=".join(session_cookie(driver)))
    assert pdf.startswith(b"%PDF-"), pdf[:20]
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=pdf, check=True, capture_output=True).stdout.decode()
    assert "What we ask of you, and who sees your answers." in text and "Participant's name:" in text, text
    preview_file = os.path.join(tempfile.mkdtemp(), "consent.pdf")
    with open(preview_file, "wb") as out:
        out.write(pdf)
    subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", "-singlefile", preview_file,
                    os.path.join(SHOTS, "study-consent-preview")], check=True)
    # A document the IRB approved as a PDF (this preview stands in for one): its text is read
    # into the document's own field and kept unsaved until the page is saved (it is not here:
    # the consent published next is the sections').
    driver.find_element(By.ID, "consent-pdf").send_keys(preview_file)
    page = driver.find_element(By.CSS_SELECTOR, "main")
    driver.find_element(By.CSS_SELECTOR, "#consent-pdf-form button[type=submit]").click()
    wait(driver, gone(page), "the consent page with the PDF's text")
    assert "is in the document below" in driver.find_element(By.ID, "from-pdf").text
    document = driver.find_element(By.ID, "f-consent-review-html-en").get_attribute("value")
    assert document.startswith("<p>") and "What we ask of you, and who sees your answers." in document, document
    kind = Select(driver.find_element(By.ID, "f-consent-review-type")).first_selected_option.get_attribute("value")
    assert kind == "html", kind
    shot(driver, "study-consent-from-pdf")
    assert api_draft(STUDY)["consent"].get("review", {}).get("type") != "html", "nothing is saved until the page is"
    driver.find_element(By.LINK_TEXT, "Actions and versions").click()
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=action][value=publish-updates]")), "the update action")
    driver.find_element(By.XPATH, "//input[@value='publish-updates']/ancestor::form//button").click()
    preview = wait(driver, EC.presence_of_element_located((By.ID, "publish-preview")), "what publishing changes").text
    assert "The consent changes" in preview and f"version {held}" in preview, preview
    shot(driver, "study-publish-preview")
    driver.find_element(By.ID, "reconsent-true").click()
    driver.find_element(By.XPATH, "//section[@id='publish-preview']//button").click()
    wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Done: publish updates."), "the consent update")
    newest = driver.find_element(By.XPATH, "//table[caption[contains(., 'versions frozen')]]//tbody/tr[1]").text
    assert "consent (everyone signs again)" in newest, newest

    # The apps learn it as the MyStudies apps read it: iOS from studyUpdates (enrollAgain beside
    # updates.consent), Android from studyUpdates and then consentDocument's top-level enrollAgain.
    for credential in (None, android):
        updates = json.load(urllib.request.urlopen(app_request(f"studyUpdates?studyId={STUDY}&studyVersion={held}", credential)))
        assert updates["updates"]["consent"] is True and updates["enrollAgain"] is True, updates
    document = json.load(urllib.request.urlopen(app_request(f"consentDocument?studyId={STUDY}&consentVersion=", android)))
    new_version = document["consent"]["version"]
    assert document["enrollAgain"] is True and new_version != signed_version, document
    assert signed_consent(dee_user) == signed_version

    # Who owes the signature: both, in the table and its filter.
    driver.get(CONSOLE + f"/studies/{STUDY}/participants?consent=owed")
    rows = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#participants tbody tr"), "those who owe a signature")
    assert len(rows) == 2 and all(row.find_elements(By.CSS_SELECTOR, ".status.warn") for row in rows), [row.text for row in rows]
    fits = driver.execute_script(
        "const t = document.getElementById('participants');"
        " return [t.scrollWidth, t.parentElement.clientWidth, document.documentElement.scrollWidth, window.innerWidth]")
    assert fits[0] <= fits[1] and fits[2] <= fits[3], f"the participants table overflows the page at 1280 px: {fits}"
    owing = driver.find_element(By.ID, "consent-owing").text
    assert f"consent version {new_version}" in owing and "2 participants owe a signature" in owing, owing

    # Reminders, with quiet hours away from now in every participant's zone: a minute that no
    # zone's clock (offsets are whole quarter hours) shows for the next seven minutes. Dee's goes
    # to her phone; Ben's app never turned notifications on.
    now = datetime.datetime.now(datetime.timezone.utc)
    quiet = now.replace(minute=(now.minute + 7) % 60, second=0, microsecond=0)
    driver.execute_script("document.getElementById('quietFrom').value = arguments[0];"
                          "document.getElementById('quietUntil').value = arguments[1];",
                          quiet.strftime("%H:%M"), (quiet + datetime.timedelta(minutes=1)).strftime("%H:%M"))
    fill(driver, "reminder-message", "Please review and sign the updated consent.")
    driver.find_element(By.CSS_SELECTOR, "#consent-reminder-form button[type=submit]").click()
    wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "2 reminders will be sent"), "the reminders asked for")
    seen = []

    def decided(d):
        shown = d.find_elements(By.ID, "reminder-outcomes")
        seen.append(shown[0].text if shown else "(no outcome shown)")
        return seen[-1] if "queued for their phones" in seen[-1] and "waiting" not in seen[-1] and seen[-1].count("\n") == 1 else d.refresh()
    try:
        outcomes = wait(driver, decided, "the reminders decided", seconds=30)
    except AssertionError as error:
        raise AssertionError(f"{error}; the page said: {seen[-1:]}") from None
    assert "1 queued for their phones" in outcomes and "1 not sent: notifications are off in their app" in outcomes, outcomes
    shot(driver, "study-participants-consent")

    # Both sign as their apps do: the consent again, then the signature with sharing "".
    for user in (ben_user, dee_user):
        consent = app_call("eligibilityConsent", STUDY)["consent"]
        assert consent["version"] == new_version, consent["version"]
        registration("updateEligibilityConsentStatus", {
            "studyId": STUDY, "eligibility": True, "sharing": "",
            "consent": {"version": new_version, "status": "completed", "pdf": base64.b64encode(PDF).decode()}}, user)
        assert signed_consent(user) == new_version
    driver.get(CONSOLE + f"/studies/{STUDY}/participants?consent=owed")
    wait(driver, EC.presence_of_element_located((By.ID, "consent-owing")), "the participants page")
    assert not driver.find_elements(By.CSS_SELECTOR, "#participants tbody tr"), "nobody owes a signature now"
    assert "0 participants owe a signature" in driver.find_element(By.ID, "consent-owing").text

    # The consent history: every signature, oldest first.
    cookie = "=".join(session_cookie(driver))
    history = download(CONSOLE + f"/studies/{STUDY}/participants/consent-history", cookie).decode().splitlines()
    assert history[0].startswith("participantId,consentId,version,status,sharing,recordedAt"), history[0]
    versions = [line.split(",")[2] for line in history[1:]]
    assert versions == [signed_version, signed_version, new_version, new_version], history
    no_browser_errors(driver)


def test_mode(driver):
    """Test mode. A study published for testing is served only to the app's test builds (made
    with its testing credentials, issued on the app's page) and joined only by invited
    testers; the live build never sees it. Launching removes what the tester recorded, and
    the live build then lists it."""
    trial = "TRIAL1"
    with open(os.path.join(ROOT, "docs/examples/complete-study.json")) as example:
        assert admin_api("PUT", f"/admin/v1/studies/{trial}/draft", example.read().replace("SLEEPWELL", trial)) in (200, 201)
    driver.get(CONSOLE + "/apps/DEMOAPP")
    wait(driver, EC.presence_of_element_located((By.ID, "issue-testing-credentials")), "the app's page")
    page = driver.find_element(By.CSS_SELECTOR, "main")
    driver.find_element(By.ID, "issue-testing-credentials").click()
    wait(driver, gone(page), "the testing credentials")
    test_build = driver.find_element(By.ID, "credential-ios").get_attribute("value")
    assert ":" in test_build and test_build != os.environ["APP_CREDENTIAL"], test_build
    shot(driver, "app-testing-credentials")
    driver.get(CONSOLE + f"/studies/{trial}/actions")
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=action][value='publish-for-testing']")),
         "the test study's actions")
    act(driver, "publish-for-testing", "publishing for testing")
    assert "Done: publish for testing." in driver.find_element(By.CSS_SELECTOR, "main").text
    assert "In testing" in driver.find_element(By.CSS_SELECTOR, "nav.study-nav").text
    assert "removed at launch" in driver.find_element(By.ID, "testing-note").text
    live_build = os.environ["APP_CREDENTIAL"]
    assert trial not in listed(live_build) and trial in listed(test_build), (listed(live_build), listed(test_build))
    for call in ("study", "studyInfo", "activityList", "resources"):
        assert app_status(call, trial, live_build) == 404, call
        assert app_status(call, trial, test_build) == 200, call
    # The response service hears of the study through study-metadata's outbox: awaited.
    wait(driver, lambda _: "Only testers invited by the study team" in enroll(None, trial).get("exception", ""),
         "the response service taking only testers", seconds=30)
    # A tester is invited from the console, as any participant is; their token joins.
    driver.get(CONSOLE + f"/studies/{trial}/invitations")
    wait(driver, EC.presence_of_element_located((By.ID, "invite-email")), "the test study's invitations")
    fill(driver, "invite-email", "tester@browser.test")
    page = driver.find_element(By.CSS_SELECTOR, "main")
    driver.find_element(By.CSS_SELECTOR, "#invite-one button[type=submit]").click()
    wait(driver, gone(page), "the invitations page after inviting a tester")
    tester_token = invitation_token("tester@browser.test")
    joined = enroll(tester_token, trial)
    assert joined.get("success") is True, joined
    shot(driver, "study-testing-invitations")
    driver.get(CONSOLE + f"/studies/{trial}/actions")
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=action][value=launch]")), "the actions in testing")
    launch = driver.find_element(By.XPATH, "//input[@value='launch']/ancestor::form").text
    assert "Everything the testers recorded is removed first" in launch and "cannot be undone" in launch, launch
    shot(driver, "study-testing-actions")
    act(driver, "launch", "the launch after testing", confirm=True)
    assert "Done: launch." in driver.find_element(By.CSS_SELECTOR, "main").text
    assert trial in listed(live_build)
    # The tester's token and invitation go with the test run (each service hears of it
    # through its outbox, so this is awaited with a deadline).
    wait(driver, lambda _: "Unknown token" in validate(tester_token, trial).get("exception", ""),
         "the tester's token gone from the response service", seconds=30)
    driver.get(CONSOLE + f"/studies/{trial}/invitations")
    wait(driver, lambda d: (d.find_elements(By.ID, "invite-email") and not d.find_elements(By.CSS_SELECTOR, "#invitations tbody tr"))
         or d.refresh(), "the tester's invitation gone from the page", seconds=30)


def png_file(folder, width=64, height=64):
    """A small real PNG (a blue square) written to `folder`, for the upload."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes([0x1d, 0x4e, 0xd8]) * width for _ in range(height))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    path = os.path.join(folder, "thumbnail.png")
    with open(path, "wb") as out:
        out.write(data)
    return path, data


def study_files(driver):
    """An image uploaded on the study's Images and PDFs page: listed with the address the apps
    fetch it at (which serves the same bytes, as an image), previewed, and offered by the
    thumbnail field; a file that is not an image or a PDF is refused and named. A PDF uploaded
    there is offered by a resource of the PDF kind."""
    folder = tempfile.mkdtemp()
    driver.get(CONSOLE + f"/studies/{STUDY}/files")
    wait(driver, EC.presence_of_element_located((By.ID, "upload")), "the images and PDFs page")
    text_file = os.path.join(folder, "notes.png")
    with open(text_file, "w") as out:
        out.write("<svg onload=alert(1)>")
    driver.find_element(By.ID, "upload").send_keys(text_file)
    page = driver.find_element(By.CSS_SELECTOR, "main")
    driver.find_element(By.CSS_SELECTOR, "#upload-form button[type=submit]").click()
    wait(driver, gone(page), "the page after a refused upload")
    assert "notes.png was not stored" in driver.find_element(By.ID, "upload-problem").text
    path, data = png_file(folder)
    driver.find_element(By.ID, "upload").send_keys(path)
    page = driver.find_element(By.CSS_SELECTOR, "main")
    driver.find_element(By.CSS_SELECTOR, "#upload-form button[type=submit]").click()
    wait(driver, gone(page), "the page after the upload")
    assert "Stored: thumbnail.png." in driver.find_element(By.CSS_SELECTOR, "main").text
    rows = driver.find_elements(By.CSS_SELECTOR, "#files tbody tr")
    assert len(rows) == 1, [row.text for row in rows]
    address = rows[0].find_element(By.CSS_SELECTOR, "input[readonly]").get_attribute("value")
    with urllib.request.urlopen(address) as reply:
        assert reply.headers["Content-Type"] == "image/png" and reply.read() == data, address
    preview = rows[0].find_element(By.CSS_SELECTOR, "img.file-preview")
    assert driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", preview) == 64
    shot(driver, "study-files")
    driver.get(CONSOLE + f"/studies/{STUDY}/basics")
    wait(driver, EC.presence_of_element_located((By.ID, "f-logo")), "the basics page")
    assert driver.find_element(By.ID, "f-logo").get_attribute("list") == "study-images"
    offered = [option.get_attribute("value") for option in driver.find_elements(By.CSS_SELECTOR, "datalist#study-images option")]
    assert offered == [address], offered

    # A PDF, offered by a resource of the PDF kind (and not by the image fields).
    driver.get(CONSOLE + f"/studies/{STUDY}/files")
    wait(driver, EC.presence_of_element_located((By.ID, "upload")), "the images and PDFs page")
    pdf = os.path.join(folder, "protocol.pdf")
    with open(pdf, "wb") as out:
        out.write(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")
    driver.find_element(By.ID, "upload").send_keys(pdf)
    page = driver.find_element(By.CSS_SELECTOR, "main")
    driver.find_element(By.CSS_SELECTOR, "#upload-form button[type=submit]").click()
    wait(driver, gone(page), "the page after the PDF's upload")
    newest = driver.find_element(By.CSS_SELECTOR, "#files tbody tr.new")
    assert "protocol.pdf" in newest.text and "PDF" in newest.text, newest.text
    pdf_address = newest.find_element(By.CSS_SELECTOR, "input[readonly]").get_attribute("value")
    driver.get(CONSOLE + f"/studies/{STUDY}/resources")
    count = driver.find_element(By.CSS_SELECTOR, "input[type=hidden][name='/resources#count']")
    row = int(count.get_attribute("value"))
    press(driver, "add /resources")
    assert driver.find_element(By.ID, f"f-resources-{row}-content-en").tag_name == "textarea"
    choose(driver, f"f-resources-{row}-type", "pdf")
    content = driver.find_element(By.ID, f"f-resources-{row}-content-en")
    assert content.tag_name == "input" and content.get_attribute("list") == "study-pdfs", content.get_attribute("outerHTML")
    offered = [option.get_attribute("value") for option in driver.find_elements(By.CSS_SELECTOR, "datalist#study-pdfs option")]
    assert offered == [pdf_address], offered
    assert not driver.find_elements(By.CSS_SELECTOR, "datalist#study-images option[value$='.pdf']")


def fhir_clients(driver):
    """A study admin registers a health system's backend service on the FHIR API clients page: a
    key set that is not one, and a private key, are refused at the field with nothing
    registered; the JWKS file chosen registers it, and the client id and token URL the page
    shows are what the client signs in with (SMART Backend Services, PyJWT); revoked from its
    row, its next token request is refused."""
    spec = importlib.util.spec_from_file_location("smart_backend_client", os.path.join(ROOT, "scripts", "smart-backend-client.py"))
    smart = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(smart)
    keys = tempfile.mkdtemp()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        smart.keygen(keys)
    jwks = json.loads(printed.getvalue())
    with open(os.path.join(keys, "es384.pem"), "rb") as source:
        private = serialization.load_pem_private_key(source.read(), password=None)
    private_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private))
    name = "Hospital warehouse (browser)"

    driver.get(CONSOLE + "/studies/DEMOSTUDY/fhir-clients")
    wait(driver, EC.presence_of_element_located((By.ID, "fhir-client-form")), "the FHIR API clients page")
    for text, said in (("not keys", "not a JSON Web Key Set"), (json.dumps({"keys": [private_jwk]}), "in key 1, d is part of a private key")):
        fill(driver, "name", name)
        fill(driver, "jwks", text)
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "#fhir-client-form button[type=submit]").click()
        wait(driver, gone(page), "the FHIR API clients page after a refused key set")
        problems = wait(driver, EC.presence_of_element_located((By.ID, "problems")), "the problems of a refused key set")
        assert said in problems.text, problems.text
        assert problems.find_element(By.CSS_SELECTOR, "a[href='#jwks']").text == "Public keys", problems.text
        assert driver.find_element(By.ID, "name").get_attribute("value") == name, "what was typed is kept"
        assert name not in " ".join(row.text for row in driver.find_elements(By.CSS_SELECTOR, "#clients tbody tr")), "nothing registered"
    shot(driver, "fhir-clients-refused")

    jwks_file = os.path.join(keys, "warehouse.jwks.json")
    with open(jwks_file, "w") as out:
        json.dump(jwks, out)
    fill(driver, "name", name)
    driver.find_element(By.ID, "jwks").clear()
    driver.find_element(By.ID, "jwksFile").send_keys(jwks_file)
    page = driver.find_element(By.CSS_SELECTOR, "main")
    driver.find_element(By.CSS_SELECTOR, "#fhir-client-form button[type=submit]").click()
    wait(driver, gone(page), "the FHIR API clients page after registering")
    registered = wait(driver, EC.presence_of_element_located((By.ID, "registered")), "the registered client's id and token URL")
    client_id = driver.find_element(By.ID, "new-client-id").get_attribute("value")
    token_url = driver.find_element(By.ID, "token-url").text
    assert name in registered.text and client_id, registered.text
    row = driver.find_element(By.CSS_SELECTOR, f"#clients tr[data-client='{client_id}']")
    assert "es384-1 (ES384)" in row.text and "rs384-1 (RS384)" in row.text and "Live" in row.text, row.text
    shot(driver, "fhir-clients")

    granted = smart.request_token(token_url, client_id, os.path.join(keys, "es384.pem"), "es384-1", "ES384", "system/*.rs", {})
    assert granted["status"] == 200, granted
    fhir = token_url.rsplit("/auth/token", 1)[0]
    study = json.load(urllib.request.urlopen(urllib.request.Request(
        fhir + "/ResearchStudy/DEMOSTUDY", headers={"Authorization": "Bearer " + granted["body"]["access_token"]})))
    assert study["resourceType"] == "ResearchStudy" and study["id"] == "DEMOSTUDY", study

    page = driver.find_element(By.CSS_SELECTOR, "main")
    row.find_element(By.CSS_SELECTOR, "form[action$='/revoke'] button").click()
    wait(driver, EC.alert_is_present(), "the confirmation before revoking").accept()
    wait(driver, gone(page), "the FHIR API clients page after revoking")
    row = driver.find_element(By.CSS_SELECTOR, f"#clients tr[data-client='{client_id}']")
    assert "Revoked" in row.text and not row.find_elements(By.CSS_SELECTOR, "form"), row.text
    refused = smart.request_token(token_url, client_id, os.path.join(keys, "es384.pem"), "es384-1", "ES384", "system/*.rs", {})
    assert refused["status"] in (400, 401), refused


def move_in(driver):
    """A super-admin moves a study in from a MyStudies deployment, from the app's page: the export
    built from the replies the MyStudies Android app recorded (Tests/Fixtures/mystudies-api) is
    chosen; a time zone left out is asked for at the form with nothing changed; the dry run lists
    what will come over and changes nothing; the import creates the study, and the app is then
    served its listing at the source's version and its weekly activity at the recorded times."""
    fixtures = os.path.join(ROOT, "Tests", "Fixtures", "mystudies-api")
    frequencies = ["onetime", "daily", "dailywithinaday", "manuallschedule", "monthly", "weekly"]
    items = [json.load(open(os.path.join(fixtures, f"activityList-{name}.json"))) for name in frequencies]
    design = json.load(open(os.path.join(fixtures, "activity-CBQ-1.2.json")))
    listing = {"studyId": "MOVEDIN", "studyVersion": "2.3", "title": "Moved in", "status": "Active",
               "settings": {"enrolling": True, "rejoin": False, "platform": "all"}}
    export = {"source": "https://wcp.example.org/StudyMetaData", "readAt": "2026-12-05T00:00:00Z", "studies": [{
        "listing": listing, "eligibilityConsent": json.load(open(os.path.join(fixtures, "eligibilityConsent.json"))),
        "activityList": {"activities": items},
        "activities": [{"activityId": item["activityId"], "version": "1.0", "reply": design} for item in items]}]}
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "studies.json")
    with open(path, "w") as out:
        json.dump(export, out)

    driver.get(CONSOLE + "/apps/DEMOAPP")
    wait(driver, EC.presence_of_element_located((By.LINK_TEXT, "Move studies in")), "the app's page")
    driver.find_element(By.LINK_TEXT, "Move studies in").click()
    wait(driver, EC.presence_of_element_located((By.ID, "exportFile")), "the move-in page")

    def submit(action, zone):
        driver.find_element(By.ID, "exportFile").send_keys(path)
        field = driver.find_element(By.ID, "timeZone")
        field.clear()
        field.send_keys(zone)
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, f"#move-in-form button[value='{action}']").click()
        wait(driver, gone(page), f"the move-in page after {action}")

    submit("plan", "")
    assert "Give the time zone" in driver.find_element(By.ID, "problems").text
    submit("plan", "UTC")
    report = driver.find_element(By.ID, "move-in-report").text
    assert "MOVEDIN (Active at the source)" in report and "new: will be created" in report, report
    assert "Nothing was changed" in report and "WeeklyTest" in report, report
    assert "studyInfo" in report, report  # the recording has no studyInfo: said, not silently dropped
    shot(driver, "move-in-dry-run")
    no_browser_errors(driver)
    assert "MOVEDIN" not in listed(None)
    submit("import", "UTC")
    report = driver.find_element(By.ID, "move-in-report").text
    assert "MOVEDIN" in report and "created" in report and "1 of 1 here" in report, report
    listing = next(study for study in json.load(urllib.request.urlopen(app_request("studyList")))["studies"]
                   if study["studyId"] == "MOVEDIN")
    assert listing["studyVersion"] == "2.3", listing
    weekly = next(item for item in app_call("activityList", "MOVEDIN")["activities"] if item["activityId"] == "WeeklyTest")
    recorded = next(item for item in items if item["activityId"] == "WeeklyTest")
    assert (weekly["startTime"], weekly["endTime"]) == (recorded["startTime"], recorded["endTime"]), weekly
    move_participants_in(driver, folder)


def move_participants_in(driver, folder):
    """Then the study's participants, as `studystack-import participants read` writes them from a
    MyStudies 2.x deployment's databases: the dry run lists what will come over and changes
    nothing; the import moves them in; the participant then signs in from the app with the
    password they had there (the auth server's salted SHA-512, checked here) and finds their study
    and participant id."""
    import hashlib
    salt = hashlib.sha512(b"journey-salt").hexdigest()
    password = "Moved-Passw0rd!"
    export = {
        "source": "mysql://reader@127.0.0.1:3306 (mystudies_participant_datastore, oauth_server_hydra, mystudies_response_server)",
        "readAt": "2026-12-05T00:00:00Z", "appId": "DEMOAPP", "databaseTimeZone": "UTC",
        "accounts": [{"userId": "source-user-1", "email": "moved@example.org", "status": 1, "authStatus": 0,
                      "passwordHash": hashlib.sha512((salt + password).encode()).hexdigest(), "passwordSalt": salt},
                     {"userId": "source-user-2", "email": "", "status": 1}],
        "sites": [], "invitations": [],
        "enrolments": [{"userId": "source-user-1", "studyId": "MOVEDIN", "participantId": "moved-participant-1",
                        "status": "enrolled", "enrolledAt": "2026-10-01 09:30:00", "dataSharing": "Provided"}],
        "consents": [], "activityStates": [], "findings": []}
    path = os.path.join(folder, "participants.json")
    with open(path, "w") as out:
        json.dump(export, out)

    def submit(action):
        driver.find_element(By.ID, "participantsFile").send_keys(path)
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, f"#move-in-participants-form button[value='{action}']").click()
        wait(driver, gone(page), f"the move-in page after the participants' {action}")

    submit("plan")
    report = driver.find_element(By.ID, "move-in-participants-report").text
    assert "2 accounts read: 1 will be created" in report and "1 keep their password" in report, report
    assert "Nothing was changed" in report and "no e-mail address" in report, report
    shot(driver, "move-in-participants")
    no_browser_errors(driver)
    submit("import")
    report = driver.find_element(By.ID, "move-in-participants-report").text
    assert "2 accounts read: 1 created" in report, report
    user = registration("login", {"emailId": "moved@example.org", "password": password})
    headers = {"applicationId": "DEMOAPP", "orgId": "DEMOORG", "userId": user["userId"], "auth": user["auth"]}
    request = urllib.request.Request(f"{REGISTRATION}/fdahpUserRegWS/studyState.api", headers=headers)
    with urllib.request.urlopen(request) as reply:
        studies = json.load(reply)["studies"]
    assert [(s["studyId"], s["status"], s["participantId"]) for s in studies] == [("MOVEDIN", "inProgress", "moved-participant-1")], studies


def no_browser_errors(driver):
    """The page ran without script errors, refused resources (a CSP violation is one) or server
    errors. (A page answered 4xx on purpose, such as a refused save, is not one.)"""
    problems = [
        entry for entry in driver.get_log("browser")
        if entry["level"] == "SEVERE" and (entry.get("source") != "network" or " status of 5" in entry["message"])
    ]
    assert not problems, f"the browser reported: {problems}"


def main():
    os.makedirs(SHOTS, exist_ok=True)
    driver = browser()
    try:
        # Sign in with the printed credentials.
        driver.get(CONSOLE + "/")
        wait(driver, EC.presence_of_element_located((By.ID, "email")), "the sign-in form")
        assert "/signin" in driver.current_url
        shot(driver, "signin")
        fill(driver, "email", EMAIL)
        fill(driver, "password", PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "form[action='/signin'] button[type=submit]").click()
        wait(driver, EC.title_contains("Studies"), "the studies list after signing in")
        assert driver.find_element(By.CSS_SELECTOR, ".who").text == EMAIL
        rows = driver.find_elements(By.CSS_SELECTOR, "table.list tbody tr")
        assert len(rows) >= 1, "the demo study is listed"
        assert any("DEMOSTUDY" in row.text for row in rows)
        shot(driver, "studies")
        no_browser_errors(driver)

        # A new study, through the form.
        driver.find_element(By.LINK_TEXT, "New study").click()
        wait(driver, EC.presence_of_element_located((By.ID, "f-studyId")), "the new-study form")
        fill(driver, "f-studyId", STUDY)
        Select(driver.find_element(By.ID, "f-appId")).select_by_value("DEMOAPP")
        fill(driver, "f-name-en", "Sleep and mood")
        Select(driver.find_element(By.ID, "f-timeZone")).select_by_value("America/Chicago")
        shot(driver, "study-new")
        driver.find_element(By.CSS_SELECTOR, "form[action='/studies/new'] button[type=submit]").click()
        wait(driver, EC.url_contains(f"/studies/{STUDY}/basics"), "the basics page of the new study")

        # Basic information, typed and saved.
        fill(driver, "f-tagline-en", "Two weeks of sleep and mood")
        fill(driver, "f-description-en", "A daily check-in about last night's sleep & today's mood.")
        fill(driver, "f-sponsor-en", "Sleep Lab <North>")
        # WCP's own basic information: the descriptive name, support address, duration, partners.
        fill(driver, "f-fullName-en", "Sleep and mood in the first two weeks after a night-shift rota change")
        fill(driver, "f-supportEmail", "sleep-study@example.org")
        fill(driver, "f-estimatedDuration-value", "2")
        Select(driver.find_element(By.ID, "f-estimatedDuration-unit")).select_by_value("weeks")
        fill(driver, "f-dataPartners", "North Hospital\nSleep Lab Data Trust")
        driver.find_element(By.CSS_SELECTOR, "button.primary[type=submit]").click()
        wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Saved"), "the saved notice on basics")
        assert driver.find_element(By.ID, "f-sponsor-en").get_attribute("value") == "Sleep Lab <North>"
        basics = api_draft(STUDY)
        assert basics["supportEmail"] == "sleep-study@example.org", basics.get("supportEmail")
        assert basics["estimatedDuration"] == {"value": 2, "unit": "weeks"}, basics.get("estimatedDuration")
        assert basics["dataPartners"] == ["North Hospital", "Sleep Lab Data Trust"], basics.get("dataPartners")
        shot(driver, "study-basics")
        no_browser_errors(driver)

        # Settings: Spanish added, enrollment closed for now.
        driver.find_element(By.LINK_TEXT, "Settings").click()
        wait(driver, EC.presence_of_element_located((By.ID, "f-languages")), "the settings page")
        driver.find_element(By.CSS_SELECTOR, "input[name='/languages'][value='es']").click()
        driver.find_element(By.ID, "f-enrolling").click()
        driver.find_element(By.CSS_SELECTOR, "button.primary[type=submit]").click()
        wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Saved"), "the saved notice on settings")
        shot(driver, "study-settings")

        # Spanish is on and nothing is written in it yet: the summary's check-list says so, under
        # Settings, as something to check that does not keep the study from being published.
        driver.find_element(By.LINK_TEXT, "Summary").click()
        settings_item = wait(driver, EC.presence_of_element_located(
            (By.XPATH, "//ul[@class='checklist']/li[a[normalize-space()='Settings']]")), "the check-list on the summary")
        assert "check-check" in settings_item.get_attribute("class"), settings_item.get_attribute("class")
        assert "Spanish is switched on, but no text has a Spanish version yet" in settings_item.text, settings_item.text
        shot(driver, "study-checklist-warning")

        # With Spanish, the texts have a Spanish field beside the English one.
        driver.find_element(By.LINK_TEXT, "Basic information").click()
        wait(driver, EC.presence_of_element_located((By.ID, "f-name-es")), "the Spanish title field")
        fill(driver, "f-name-es", "Sueño y ánimo")
        driver.find_element(By.CSS_SELECTOR, "button.primary[type=submit]").click()
        wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Saved"), "the saved notice with Spanish")

        # A refused save: the problem at its field, the keyboard focus on the list of problems.
        driver.find_element(By.LINK_TEXT, "Settings").click()
        wait(driver, EC.presence_of_element_located((By.ID, "f-languages")), "the settings page again")
        driver.find_element(By.CSS_SELECTOR, "input[name='/languages'][value='en']").click()
        fill(driver, "f-withdrawal-message-en", "Typed before the refusal")
        driver.find_element(By.CSS_SELECTOR, "button.primary[type=submit]").click()
        problems = wait(driver, EC.presence_of_element_located((By.ID, "problems")), "the list of problems")
        assert driver.switch_to.active_element == problems, "focus moves to the problems"
        field_problems = driver.find_element(By.ID, "f-languages-problems").text
        assert "en" in field_problems, field_problems
        assert "/languages" not in problems.text and "<code" not in problems.get_attribute("innerHTML"), problems.text
        assert driver.find_element(By.ID, "f-withdrawal-message-en").get_attribute("value") == "Typed before the refusal"
        shot(driver, "study-settings-refused")
        no_browser_errors(driver)

        # What an app would be served is what was typed.
        draft = api_draft(STUDY)
        assert draft["appId"] == "DEMOAPP", draft
        assert draft["timeZone"] == "America/Chicago", draft
        assert draft["name"] == {"en": "Sleep and mood", "es": "Sueño y ánimo"}, draft["name"]
        assert draft["tagline"] == "Two weeks of sleep and mood", draft
        assert draft["sponsor"] == "Sleep Lab <North>", draft
        assert draft["languages"] == ["en", "es"], draft["languages"]
        assert draft["enrolling"] is False, draft
        assert "withdrawal" not in draft or draft["withdrawal"].get("message") is None, "the refused save changed nothing"
        driver.find_element(By.ID, "f-languages")  # still on the refused settings page

        # Settings again, with English back.
        driver.find_element(By.CSS_SELECTOR, "input[name='/languages'][value='en']").click()
        fill(driver, "f-withdrawal-message-en", "Your answers are kept.")
        save(driver, "settings with English again")

        # An overview page, added as a row.
        driver.find_element(By.LINK_TEXT, "Overview").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "button[name=op][value='add /overview']")), "the overview page")
        press(driver, "add /overview")
        press(driver, "add /overview")
        fill(driver, "f-overview-0-title-en", "Welcome")
        fill(driver, "f-overview-0-text-en", "Two weeks, two minutes a day.")
        fill(driver, "f-overview-0-image", "https://studystack.example.org/welcome.png")
        # The second page added and never touched does not keep the page from saving.
        save(driver, "the overview")
        overview = api_draft(STUDY)["overview"]
        assert len(overview) == 1 and overview[0]["title"] == "Welcome", overview

        # Eligibility: a token, then a test of one question.
        driver.find_element(By.LINK_TEXT, "Eligibility").click()
        wait(driver, EC.presence_of_element_located((By.ID, "f-eligibility-type")), "the eligibility page")
        Select(driver.find_element(By.ID, "f-eligibility-type")).select_by_value("combined")
        fill(driver, "f-eligibility-tokenTitle-en", "Your enrollment token")
        press(driver, "add /eligibility/questions")
        fill(driver, "f-eligibility-questions-0-key", "adult")
        fill(driver, "f-eligibility-questions-0-text-en", "Are you 18 or older?")
        Select(driver.find_element(By.ID, "f-eligibility-questions-0-passingAnswer")).select_by_value("true")
        save(driver, "eligibility")
        shot(driver, "study-eligibility")

        # Consent: two sections, the second moved up; a comprehension test with two choices.
        driver.find_element(By.LINK_TEXT, "Consent").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "button[name=op][value='add /consent/visualScreens']")), "the consent page")
        press(driver, "add /consent/visualScreens")
        Select(driver.find_element(By.ID, "f-consent-visualScreens-0-type")).select_by_value("privacy")
        fill(driver, "f-consent-visualScreens-0-title-en", "Privacy")
        fill(driver, "f-consent-visualScreens-0-text-en", "Your answers are coded.")
        press(driver, "add /consent/visualScreens")
        Select(driver.find_element(By.ID, "f-consent-visualScreens-1-type")).select_by_value("overview")
        fill(driver, "f-consent-visualScreens-1-title-en", "About the study")
        fill(driver, "f-consent-visualScreens-1-text-en", "What we ask of you.")
        press(driver, "up /consent/visualScreens/1")
        assert driver.find_element(By.ID, "f-consent-visualScreens-0-title-en").get_attribute("value") == "About the study"
        driver.find_element(By.ID, "f-consent-comprehension-on").click()
        fill(driver, "f-consent-comprehension-passScore", "1")
        press(driver, "add /consent/comprehension/questions")
        fill(driver, "f-consent-comprehension-questions-0-key", "leave")
        fill(driver, "f-consent-comprehension-questions-0-text-en", "Can you leave at any time?")
        press(driver, "add /consent/comprehension/questions/0/choices")
        press(driver, "add /consent/comprehension/questions/0/choices")
        fill(driver, "f-consent-comprehension-questions-0-choices-0-text-en", "Yes")
        fill(driver, "f-consent-comprehension-questions-0-choices-0-value", "yes")
        fill(driver, "f-consent-comprehension-questions-0-choices-1-text-en", "No")
        fill(driver, "f-consent-comprehension-questions-0-choices-1-value", "no")
        # The correct answer is ticked on its choice, not typed again.
        driver.find_element(By.ID, "f-consent-comprehension-questions-0-choices-0-mark").click()
        Select(driver.find_element(By.ID, "f-consent-comprehension-questions-0-evaluation")).select_by_value("any")
        save(driver, "consent")
        shot(driver, "study-consent")
        no_browser_errors(driver)

        # Two activities: a questionnaire and an active task.
        driver.find_element(By.LINK_TEXT, "Activities").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "button[name=op][value='add /activities']")), "the activities page")
        press(driver, "add /activities")
        fill(driver, "f-activities-0-activityId", "daily")
        fill(driver, "f-activities-0-title-en", "Daily check-in")
        Select(driver.find_element(By.ID, "f-activities-0-type")).select_by_value("questionnaire")
        press(driver, "add /activities")
        fill(driver, "f-activities-1-activityId", "kicks")
        fill(driver, "f-activities-1-title-en", "Kick counter")
        Select(driver.find_element(By.ID, "f-activities-1-type")).select_by_value("task")
        save(driver, "the activities")

        # The questionnaire: a schedule anchored to enrollment, a question of every response type, a form.
        driver.find_element(By.PARTIAL_LINK_TEXT, "Open activity 1").click()
        wait(driver, EC.presence_of_element_located((By.ID, "f-activities-0-schedule-frequency")), "the questionnaire's page")
        choose(driver, "f-activities-0-schedule-frequency", "daily")
        fill(driver, "f-activities-0-schedule-startDays", "0")
        fill(driver, "f-activities-0-schedule-endDays", "14")
        # Times in the browser's own time inputs (12-hour in an en-US browser): a third input
        # appears once the second is filled.
        time_inputs = "#f-activities-0-schedule-dailyTimes input[type=time]"
        times = driver.find_elements(By.CSS_SELECTOR, time_inputs)
        assert len(times) == 2, f"a new schedule offers two empty time inputs, not {len(times)}"
        times[0].send_keys("0800AM")
        times[1].send_keys("0800PM")
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, time_inputs)) == 3, "a third time input once the second is filled")
        assert [t.get_attribute("value") for t in times] == ["08:00", "20:00"], [t.get_attribute("value") for t in times]
        # Each time says whose clock it is read on: the windows on the participant's own.
        zone = driver.find_element(By.ID, "f-activities-0-schedule-dailyTimes-zone").text
        assert zone == "Each participant's own time (their phone's time zone).", zone
        driver.find_element(By.ID, "f-activities-0-schedule-anchor-on").click()
        choose(driver, "f-activities-0-schedule-anchor-source", "enrollmentDate")
        assert not driver.find_elements(By.ID, "f-activities-0-schedule-anchor-propertyKey"), "a property's field shown for an enrollment anchor"
        # The steps in order on the activity's page: key, title, kind and response type.
        for index, (kind, _, _) in enumerate(RESPONSE_TYPES):
            step = f"f-activities-0-steps-{index}"
            press(driver, "add /activities/0/steps")
            fill(driver, f"{step}-key", f"q{index + 1}")
            fill(driver, f"{step}-title-en", f"Question {index + 1}: {kind}")
            choose(driver, f"{step}-type", "question")
            choose(driver, f"{step}-resultType", kind)
        form_index = len(RESPONSE_TYPES)
        press(driver, "add /activities/0/steps")
        fill(driver, f"f-activities-0-steps-{form_index}-key", "symptoms")
        fill(driver, f"f-activities-0-steps-{form_index}-title-en", "Symptoms")
        choose(driver, f"f-activities-0-steps-{form_index}-type", "form")
        save(driver, "the questionnaire")
        shot(driver, "study-activity")
        schedule = api_draft(STUDY)["activities"][0]["schedule"]
        assert schedule["dailyTimes"] == ["08:00", "20:00"] and schedule["anchor"] == {"source": "enrollmentDate"}, schedule

        # A changed form asks before the page is left. chromedriver answers the browser's own
        # question by itself (it accepts every beforeunload prompt), so the test asks the page
        # as the browser does: a cancelable beforeunload event, cancelled only once a field
        # changed. Leaving then drops the change (the draft keeps the saved title).
        def leaving_is_questioned():
            return driver.execute_script(
                "const e = new Event('beforeunload', {cancelable: true}); window.dispatchEvent(e); return e.defaultPrevented")
        title_field = "f-activities-0-title-en"
        original = driver.find_element(By.ID, title_field).get_attribute("value")
        assert not leaving_is_questioned(), "an untouched page asks before it is left"
        driver.find_element(By.ID, title_field).send_keys(" (changed)")
        assert leaving_is_questioned(), "a changed page is left without a question"
        driver.find_element(By.LINK_TEXT, "Summary").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "section.checklist")), "the summary after leaving")
        assert api_draft(STUDY)["activities"][0]["title"] in (original, {"en": original}), "leaving saved nothing"
        driver.get(CONSOLE + f"/studies/{STUDY}/activities/daily")
        wait(driver, EC.presence_of_element_located((By.ID, title_field)), "the questionnaire's page again")
        # Save stays in view at the foot of the long page.
        bar = driver.find_element(By.CSS_SELECTOR, ".save-bar")
        assert driver.execute_script("const r = arguments[0].getBoundingClientRect(); return r.bottom <= window.innerHeight && r.top >= 0", bar), \
            "the Save bar is in view at the top of a long page"
        no_browser_errors(driver)

        # Each step's format on the step's own page, reached from the activity's page.
        def open_step(number, what):
            driver.find_element(By.CSS_SELECTOR, f"a[aria-label^='Open step {number}:']").click()
            wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main h1"), "Step"), f"the page of {what}")

        def back_to_activity(activity):
            driver.find_element(By.PARTIAL_LINK_TEXT, f"Back to activity {activity}").click()
            wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main h1"), f"Activity {activity}"), f"activity {activity}")

        for index, (kind, fields, lists) in enumerate(RESPONSE_TYPES):
            if not fields and not lists and kind not in SELECTS:
                continue
            step = f"f-activities-0-steps-{index}"
            open_step(index + 1, kind)
            for field, value in fields.items():
                fill(driver, f"{step}-{field}", value)
            if kind in SELECTS:
                field, value = SELECTS[kind]
                Select(driver.find_element(By.ID, f"{step}-{field}")).select_by_value(value)
            for list_name, row_fields in lists:
                for row in range(2):
                    press(driver, f"add /activities/0/steps/{index}/{list_name}")
                    prefix = f"{step}-{list_name.replace('/', '-')}-{row}"
                    for field in row_fields:
                        fill(driver, f"{prefix}-{field}", f"{['low', 'high'][row]}" if field != "image" and field != "selectedImage" else "aW1n")
            if kind == "date":
                # The earliest date in the browser's date-and-time control, typed on the study's
                # clock (Chicago, as the page says beside it), saved as the apps read it.
                earliest = driver.find_element(By.ID, f"{step}-format-minDate")
                assert earliest.get_attribute("type") == "datetime-local", earliest.get_attribute("type")
                earliest.send_keys("01052027" + Keys.TAB + "0900AM")
                assert earliest.get_attribute("value") == "2027-01-05T09:00", earliest.get_attribute("value")
                zone = driver.find_element(By.ID, f"{step}-format-minDate-zone").text
                assert zone == "America/Chicago time, the study's time zone.", zone
                Select(driver.find_element(By.ID, f"{step}-format-dateRange")).select_by_value("custom")
            save(driver, f"the {kind} question")
            if kind == "date":
                served = api_draft(STUDY)["activities"][0]["steps"][index]["format"]
                assert served["minDate"] == "2027-01-05T09:00:00.000-0600" and served["dateRange"] == "custom", served
                shown = driver.find_element(By.ID, f"{step}-format-minDate").get_attribute("value")
                assert shown == "2027-01-05T09:00", shown
            if kind == "textChoice":
                shot(driver, "study-step")
            back_to_activity("daily")
        step = f"f-activities-0-steps-{form_index}"
        open_step(form_index + 1, "the form")
        press(driver, f"add /activities/0/steps/{form_index}/steps")
        fill(driver, f"{step}-steps-0-key", "symptom")
        fill(driver, f"{step}-steps-0-title-en", "Which symptom?")
        choose(driver, f"{step}-steps-0-resultType", "text")
        fill(driver, f"{step}-steps-0-format-maxLength", "100")
        save(driver, "the form")
        no_browser_errors(driver)

        # The active task: a fetal kick counter, available from the launch for the study's lifetime.
        driver.find_element(By.LINK_TEXT, "Activities").click()
        wait(driver, EC.presence_of_element_located((By.PARTIAL_LINK_TEXT, "Open activity 2")), "the activities page again")
        driver.find_element(By.PARTIAL_LINK_TEXT, "Open activity 2").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "button[name=op][value='add /activities/1/steps']")), "the task's page")
        press(driver, "add /activities/1/steps")
        fill(driver, "f-activities-1-steps-0-key", "counter")
        fill(driver, "f-activities-1-steps-0-title-en", "Count the kicks")
        choose(driver, "f-activities-1-steps-0-type", "task")
        choose(driver, "f-activities-1-steps-0-resultType", "fetalKickCounter")
        save(driver, "the task")
        open_step(1, "the task's step")
        fill(driver, "f-activities-1-steps-0-format-duration", "3600")
        fill(driver, "f-activities-1-steps-0-format-kickCount", "10")
        save(driver, "the task's step")

        # The team's manual check-list (WCP's), on the study's page: two items ticked, saved with
        # who ticked them and when.
        driver.get(CONSOLE + f"/studies/{STUDY}")
        wait(driver, EC.presence_of_element_located((By.ID, "manual-checklist")), "the manual check-list")
        assert "0 of 11 ticked" in driver.find_element(By.ID, "manual-checklist").text
        driver.find_element(By.ID, "tick-irbApproval").click()
        driver.find_element(By.ID, "tick-consentReviewed").click()
        page = driver.find_element(By.TAG_NAME, "html")
        driver.find_element(By.XPATH, "//section[@id='manual-checklist']//button[@type='submit']").click()
        wait(driver, gone(page), "the study's page after ticking")
        wait(driver, EC.text_to_be_present_in_element((By.ID, "manual-checklist"), "The check-list is saved."), "the saved check-list")
        manual = driver.find_element(By.ID, "manual-checklist").text
        assert "2 of 11 ticked" in manual and manual.count("Ticked by") == 2 and " UTC" in manual, manual
        assert driver.find_element(By.ID, "tick-irbApproval").is_selected()
        shot(driver, "study-manual-checklist")

        # Launch, from the actions page, which shows the check-list first: every section of the
        # builder, each with its state, none needing attention now.
        driver.find_element(By.LINK_TEXT, "Actions and versions").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=action][value=launch]")), "the actions page")
        items = driver.find_elements(By.CSS_SELECTOR, "ul.checklist li")
        assert len(items) == 10, [item.text for item in items]
        assert not driver.find_elements(By.CSS_SELECTOR, "ul.checklist li.check-attention"), [item.text for item in items]
        assert "Nothing keeps the draft from being published" in driver.find_element(By.CSS_SELECTOR, "section.checklist").text
        summary = driver.find_element(By.ID, "manual-summary").text
        assert "Confirmed by the team: 2 of 11 items" in summary and "App store approval" in summary, summary
        shot(driver, "study-checklist")
        driver.find_element(By.XPATH, "//input[@value='launch']/ancestor::form//button").click()
        wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Done: launch."), "the launch")
        assert "1.0" in driver.find_element(By.CSS_SELECTOR, "table.list").text
        # The audit log says what happened in words: the launch, the ticks with their items.
        driver.get(CONSOLE + f"/studies/{STUDY}/audit")
        audit = wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "table.list")), "the audit log").text
        assert "Launched the study" in audit and "Ticked an item of the manual check-list" in audit, audit[:400]
        assert "item: IRB review completed" in audit and "study.launch" not in audit, audit[:400]
        driver.get(CONSOLE + f"/studies/{STUDY}/actions")
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "table.list")), "the actions page again")
        # Pausing tells every participant; the page says so, in the notification's words, first.
        pause = driver.find_element(By.XPATH, "//input[@value='pause']/ancestor::form").text
        assert "Every participant is sent a notification:" in pause and "is paused." in pause, pause
        shot(driver, "study-actions")

        # What the app is served is what was typed.
        consent = app_call("eligibilityConsent", STUDY)
        assert consent["eligibility"]["type"] == "combined", consent["eligibility"]
        assert consent["eligibility"]["tokenTitle"] == "Your enrollment token", consent["eligibility"]
        assert [step["key"] for step in consent["eligibility"]["test"]] == ["adult"], consent["eligibility"]
        assert consent["eligibility"]["correctAnswers"] == [{"key": "adult", "answer": True}], consent["eligibility"]
        screens = consent["consent"]["visualScreens"]
        assert [(screen["type"], screen["title"]) for screen in screens] == [("overview", "About the study"), ("privacy", "Privacy")], screens
        comprehension = consent["consent"]["comprehension"]
        assert comprehension["passScore"] == 1, comprehension
        assert len(comprehension["questions"]) == 1, comprehension
        assert comprehension["correctAnswers"][0]["answer"] == ["yes"], comprehension
        activities = {activity["activityId"]: activity for activity in app_call("activityList", STUDY)["activities"]}
        assert sorted(activities) == ["daily", "kicks"], sorted(activities)
        assert activities["daily"]["frequency"]["type"] == "Daily", activities["daily"]["frequency"]
        assert activities["daily"]["schedulingType"] == "AnchorDate", activities["daily"]
        assert activities["kicks"]["type"] == "task", activities["kicks"]
        daily = app_activity(STUDY, "daily")
        steps = daily["activity"]["steps"]
        assert len(steps) == len(RESPONSE_TYPES) + 1, len(steps)
        assert [step["resultType"] for step in steps[:-1]] == [kind for kind, _, _ in RESPONSE_TYPES], [step["resultType"] for step in steps]
        assert steps[0]["format"]["maxValue"] == 10 and steps[0]["format"]["minValue"] == 0, steps[0]["format"]
        assert [choice["value"] for choice in steps[5]["format"]["textChoices"]] == ["low", "high"], steps[5]["format"]
        assert steps[7]["format"]["style"] == "Integer" and steps[7]["format"]["unit"] == "cups", steps[7]["format"]
        assert steps[-1]["type"] == "form" and steps[-1]["steps"][0]["key"] == "symptom", steps[-1]
        kicks = app_activity(STUDY, "kicks")["activity"]["steps"]
        assert kicks[0]["resultType"] == "fetalKickCounter" and kicks[0]["format"]["kickCount"] == 10, kicks
        info = app_call("studyInfo", STUDY)
        assert [(page["title"], page["text"]) for page in info["info"]] == [("Welcome", "Two weeks, two minutes a day.")], info["info"]

        # An update after the launch: the questionnaire's title changes, "Publish updates"
        # freezes version 1.1, and an app that holds 1.0 is told its activities changed.
        assert app_updates(STUDY, "1.0")["currentVersion"] == "1.0"
        retitle_and_publish(driver, "Daily check-in, shorter")
        updates = app_updates(STUDY, "1.0")
        assert updates["currentVersion"] == "1.1", updates
        assert updates["updates"]["activities"] is True and updates["updates"]["consent"] is False, updates
        listed = {activity["activityId"]: activity for activity in app_call("activityList", STUDY)["activities"]}
        assert (listed["daily"]["title"], listed["daily"]["activityVersion"]) == ("Daily check-in, shorter", "1.1"), listed["daily"]
        assert listed["kicks"]["activityVersion"] == "1.0", listed["kicks"]

        # A viewer: invited on the Admins page, the invitation accepted in a browser of their own,
        # the viewer role given on the Team page. They see every page without a control, and a
        # POST they craft with their own session and form token is refused by the admin API.
        viewer_email, viewer_password = "viewer@browser.test", "Viewer-Pass-123!"
        driver.get(CONSOLE + "/admins")
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "form[action='/admins'] #email")), "the admins page")
        fill(driver, "email", viewer_email)
        driver.find_element(By.CSS_SELECTOR, "form[action='/admins'] button[type=submit]").click()
        code = wait(driver, EC.presence_of_element_located((By.ID, "invitation-code")), "the invitation code").text
        driver.get(CONSOLE + f"/studies/{STUDY}/team")
        wait(driver, EC.presence_of_element_located((By.ID, "role")), "the team page")
        fill(driver, "email", viewer_email)
        Select(driver.find_element(By.ID, "role")).select_by_value("viewer")
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, f"form[action='/studies/{STUDY}/team'] button.primary").click()
        wait(driver, gone(page), "the team page after giving the role")
        assert viewer_email in driver.find_element(By.CSS_SELECTOR, "main").text
        viewer = browser()
        try:
            viewer.get(CONSOLE + "/invitation")
            wait(viewer, EC.presence_of_element_located((By.ID, "code")), "the invitation page")
            fill(viewer, "code", code)
            fill(viewer, "password", viewer_password)
            fill(viewer, "again", viewer_password)
            viewer.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
            wait(viewer, EC.presence_of_element_located((By.ID, "email")), "the sign-in form after accepting the invitation")
            sign_in(viewer, viewer_email, viewer_password, "the viewer")
            viewer.get(CONSOLE + f"/studies/{STUDY}/basics")
            wait(viewer, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "You can read this study but not change it"), "the read-only page")
            assert not viewer.find_elements(By.CSS_SELECTOR, "main input:not([type=hidden]), main textarea, main select, main button[type=submit]"), \
                "a viewer's page has no form controls"
            viewer.get(CONSOLE + f"/studies/{STUDY}/activities/daily")
            wait(viewer, EC.presence_of_element_located((By.CSS_SELECTOR, "table.rows")), "the viewer's activity page")
            assert not viewer.find_elements(By.CSS_SELECTOR, "main input:not([type=hidden]), main select, main button[type=submit]")
            shot(viewer, "study-viewer")
            name, value = session_cookie(viewer)
            csrf = viewer.find_element(By.CSS_SELECTOR, "form[action='/signout'] input[name=csrf]").get_attribute("value")
            before = api_draft(STUDY)
            status, _, body = raw("POST", f"/studies/{STUDY}/basics", f"{name}={value}",
                                  {"csrf": csrf, "base": "", "/tagline/en": "Changed by a viewer"})
            assert status == 403 and "Not allowed" in body, (status, body[:300])
            assert api_draft(STUDY) == before, "the viewer's crafted POST changed nothing"
        finally:
            viewer.quit()

        # The admin's own session, attacked: a POST without the form token, and the cookie
        # altered by one byte. Neither changes anything.
        name, value = session_cookie(driver)
        before = api_draft(STUDY)
        status, _, body = raw("POST", f"/studies/{STUDY}/basics", f"{name}={value}", {"/tagline/en": "No form token"})
        assert status == 403 and "This form cannot be accepted" in body, (status, body[:300])
        altered = value[:20] + ("A" if value[20] != "A" else "B") + value[21:]
        status, location, _ = raw("GET", f"/studies/{STUDY}/basics", f"{name}={altered}")
        assert status == 303 and location.startswith("/signin"), (status, location)
        csrf = driver.find_element(By.CSS_SELECTOR, "form[action='/signout'] input[name=csrf]").get_attribute("value")
        status, location, _ = raw("POST", f"/studies/{STUDY}/basics", f"{name}={altered}", {"csrf": csrf, "/tagline/en": "Altered cookie"})
        assert status == 303 and location.startswith("/signin"), (status, location)
        assert api_draft(STUDY) == before, "nothing changed"
        # The session as it is, for the replay after signing out.
        signed_in_cookie = f"{name}={value}"
        assert raw("GET", f"/studies/{STUDY}/basics", signed_in_cookie)[0] == 200

        # Enrollment tokens: a batch of 500 made in the console (the running study is known to the
        # response service by now). Its CSV holds 500 distinct tokens whose check letters hold, and
        # the printable sheet's QR codes, rendered by pdftoppm and read by zbarimg, are exactly them.
        driver.get(CONSOLE + f"/studies/{STUDY}/tokens")
        wait(driver, EC.presence_of_element_located((By.ID, "count")), "the tokens page")
        fill(driver, "count", "500")
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "form[data-progress] button[type=submit]").click()
        wait(driver, gone(page), "the tokens page after making a batch")
        row = driver.find_element(By.CSS_SELECTOR, "#batches tr.new").text
        assert "500" in row, row
        shot(driver, "study-tokens")
        cookie = "=".join(session_cookie(driver))
        csv_link = driver.find_element(By.CSS_SELECTOR, "#batches tr.new a[href$='tokens.csv']").get_attribute("href")
        pdf_link = driver.find_element(By.CSS_SELECTOR, "#batches tr.new a[href$='qr.pdf']").get_attribute("href")
        lines = download(csv_link, cookie).decode().splitlines()
        assert lines[0] == "token,used", lines[:2]
        tokens = [line.split(",")[0] for line in lines[1:]]
        assert len(tokens) == 500 and len(set(tokens)) == 500, len(tokens)
        assert all(token_is_valid(token) for token in tokens), [t for t in tokens if not token_is_valid(t)][:3]
        codes = qr_codes(download(pdf_link, cookie))
        assert len(codes) == 500 and sorted(codes) == sorted(tokens), (len(codes), sorted(set(codes) ^ set(tokens))[:5])
        spare_token = tokens[0]

        # Sites and invitations: a site added, then three people invited from a CSV file chosen in
        # the form. Three e-mails arrive in the mail folder, each with its own token (and the QR
        # code of it); one invitation is revoked, and the response service then refuses its token.
        # A CSV with a malformed address is refused whole: nobody in it is invited.
        driver.get(CONSOLE + f"/studies/{STUDY}/invitations")
        wait(driver, EC.presence_of_element_located((By.ID, "site-name")), "the invitations page")
        driver.find_element(By.CSS_SELECTOR, "details.add summary").click()
        fill(driver, "site-name", "North Clinic")
        fill(driver, "site-location", "Leeds")
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "form[action$='/sites'] button[type=submit]").click()
        wait(driver, gone(page), "the invitations page after adding a site")
        assert "North Clinic" in driver.find_element(By.ID, "sites").text
        invitees = ["ana@browser.test", "ben@browser.test", "cai@browser.test"]
        folder = tempfile.mkdtemp()
        bad = os.path.join(folder, "bad.csv")
        with open(bad, "w") as out:
            out.write("email,site\nzoe@browser.test,North Clinic\nnot-an-address,North Clinic\n")
        driver.find_element(By.ID, "csvFile").send_keys(bad)
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "#invite-csv button[type=submit]").click()
        wait(driver, gone(page), "the invitations page after a refused CSV")
        refusal = driver.find_element(By.ID, "problems").text
        assert "line 3" in refusal and "not-an-address" in refusal, refusal
        assert not driver.find_elements(By.ID, "invitations"), "nobody in the refused file is invited"
        shot(driver, "study-invitations-refused")
        good = os.path.join(folder, "invite.csv")
        with open(good, "w") as out:
            out.write("email,site\n" + "".join(f"{email},North Clinic\n" for email in invitees))
        driver.find_element(By.ID, "csvFile").send_keys(good)
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "#invite-csv button[type=submit]").click()
        wait(driver, gone(page), "the invitations page after inviting from a CSV")
        rows = driver.find_elements(By.CSS_SELECTOR, "#invitations tbody tr")
        assert len(rows) == 3 and all("Invited, not joined yet" in row.text and "North Clinic" in row.text for row in rows), [r.text for r in rows]
        # The filter says the states in words too.
        state_options = [o.text for o in Select(driver.find_element(By.ID, "state")).options]
        assert state_options == ["Any", "Invited, not joined yet", "Joined", "Joined, then withdrew", "Revoked", "Expired"], state_options
        tokens = {email: invitation_token(email) for email in invitees}
        assert len(set(tokens.values())) == 3, tokens
        revoked = next(row for row in rows if invitees[0] in row.text)
        page = driver.find_element(By.CSS_SELECTOR, "main")
        revoked.find_element(By.CSS_SELECTOR, "form[action$='/revoke'] button").click()
        wait(driver, gone(page), "the invitations page after revoking")
        row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "#invitations tbody tr") if invitees[0] in r.text)
        assert "Revoked" in row.text, row.text
        # The site's counts: location, target, invited, enrolled, withdrawn, revoked, expired, in the study.
        cells = [cell.text for cell in driver.find_element(
            By.XPATH, "//table[@id='sites']//tr[th[contains(., 'North Clinic')]]").find_elements(By.TAG_NAME, "td")]
        assert cells[2:] == ["2", "0", "0", "1", "0", "0"], cells
        shot(driver, "study-invitations")
        refused = enroll(tokens[invitees[0]])
        assert refused.get("success") is False and "withdrawn by the study team" in refused.get("exception", ""), refused
        assert validate(tokens[invitees[1]]).get("success") is True

        # The demo participant's check-ins (the seed's and one more) and the quickstart's response
        # have arrived in DEMOSTUDY's daily table.
        driver.get(CONSOLE + "/studies/DEMOSTUDY/data")
        demo_rows = "#tables tr[data-table='daily'] td.number"
        wait(driver, lambda d: [c for c in d.find_elements(By.CSS_SELECTOR, demo_rows) if c.text == "3"] or d.refresh(),
             "the demo study's three daily rows", seconds=30)

        # Running the study. Ben, invited to North Clinic, signs up in the app, enrolls with his
        # invitation's token, signs the consent with a PDF and reports his activity; Cai enrolls
        # with hers. Their responses are submitted as the app does, and one more arrives for a
        # version of the questionnaire the server does not have yet.
        ben = "ben@browser.test"
        registration("register", {"emailId": ben, "password": "Ben-Passw0rd!"})
        registration("verify", {"emailId": ben, "code": verification_code(ben)})
        ben_user = registration("login", {"emailId": ben, "password": "Ben-Passw0rd!"})
        ben_token = enroll(tokens[ben])["data"]["appToken"]
        cai_token = enroll(tokens["cai@browser.test"])["data"]["appToken"]
        registration("updateStudyState", {"studies": [{"studyId": STUDY, "status": "inProgress", "participantId": ben_token}]}, ben_user)
        consent_version = app_call("eligibilityConsent", STUDY)["consent"]["version"]
        registration("updateEligibilityConsentStatus", {
            "studyId": STUDY, "eligibility": True, "sharing": "Provided",
            "consent": {"version": consent_version, "status": "completed", "pdf": base64.b64encode(PDF).decode()}}, ben_user)
        registration("updateActivityState", {"studyId": STUDY, "activity": [{
            "activityId": "daily", "activityRunId": "3", "activityState": "inProgress", "activityVersion": "1.1",
            "activityRun": {"total": 14, "completed": 3, "missed": 0}}]}, ben_user)
        for cups, words, rested in [(3, "slept well", True), (1, "short night", False), (2, "woke twice", True)]:
            submit(ben_token, "daily", "1.1", answers(cups, words, rested))
        submit(cai_token, "daily", "1.1", answers(5, "cai's morning", True))
        submit(ben_token, "daily", "1.2", answers(4, "from a newer app", False))

        # Ben on the participants page: enrolled at North Clinic; his page serves the same PDF
        # bytes and lists his responses.
        cookie = "=".join(session_cookie(driver))
        driver.get(CONSOLE + f"/studies/{STUDY}/participants")
        # The invitation and the account meet when both the response service's news of the spent
        # token and the app's report have arrived, in either order.
        at_site = f"//table[@id='participants']//tr[contains(., '{ben}') and contains(., 'North Clinic')]"
        row = wait(driver, lambda d: d.find_elements(By.XPATH, at_site) or d.refresh(), "Ben at North Clinic", seconds=30)[0]
        assert "Taking part" in row.text and "inProgress" not in row.text, row.text
        ben_row = row.text
        fits = driver.execute_script(
            "const t = document.getElementById('participants');"
            " return [t.scrollWidth, t.parentElement.clientWidth, document.documentElement.scrollWidth, window.innerWidth,"
            " Array.from(t.rows[1].cells, c => c.offsetWidth + ':' + c.textContent.trim().slice(0, 30))]")
        assert fits[0] <= fits[1] and fits[2] <= fits[3], f"the participants table overflows the page at 1280 px: {fits}"
        shot(driver, "study-participants")
        row.find_element(By.TAG_NAME, "a").click()
        wait(driver, EC.presence_of_element_located((By.ID, "consents")), "Ben's page")
        pdf_link = driver.find_element(By.CSS_SELECTOR, "#consents a[href$='/pdf']").get_attribute("href")
        assert download(pdf_link, cookie) == PDF, "the console serves the PDF the app uploaded"
        ben_page = driver.current_url
        # One name: the page's address is the number the list names Ben by, numbered in the
        # study from 1 (Ben and Cai are its only participants).
        page_number = ben_page.rsplit("/", 1)[1]
        assert page_number in ("1", "2") and f"Participant {page_number}" in ben_row, (ben_page, ben_row)
        assert driver.find_element(By.ID, "participant-title").text == f"Participant {page_number}"
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#responses tbody tr")) == 4 or d.refresh(),
             "Ben's four responses on his page", seconds=30)
        shot(driver, "study-participant")
        # The invitation he joined with names him the same way, and leads to the same page.
        driver.get(CONSOLE + f"/studies/{STUDY}/invitations")
        joined = wait(driver, lambda d: [r for r in d.find_elements(By.CSS_SELECTOR, "#invitations tbody tr") if ben in r.text],
                      "Ben's invitation")[0]
        assert "Joined" in joined.text and f"Participant {page_number}" in joined.text, joined.text
        assert joined.find_element(By.LINK_TEXT, f"Participant {page_number}").get_attribute("href") == ben_page
        driver.get(ben_page)

        # A message to the study's participants now: the audience first (Ben has joined), then a
        # confirmation, then the message in the study's list.
        driver.find_element(By.LINK_TEXT, "Messages").click()
        audience = wait(driver, EC.presence_of_element_located((By.ID, "audience")), "the messages page").text
        assert "It goes to 1 participant (everyone who has joined the study)" in audience, audience
        fill(driver, "f-text-en", "The study team is away on Friday; your check-ins still count.")
        driver.find_element(By.CSS_SELECTOR, "form button.primary[type=submit]").click()
        confirm = wait(driver, EC.alert_is_present(), "the confirmation before sending")
        assert "Send this message to 1 participant now?" in confirm.text, confirm.text
        confirm.accept()
        wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Sent."), "the sent notice")
        sent_row = driver.find_element(By.XPATH, "//table[@id='notifications']//tr[contains(., 'away on Friday')]").text
        assert "Message from the team" in sent_row, sent_row
        shot(driver, "study-messages")
        no_browser_errors(driver)
        driver.get(ben_page)

        # The failed response, listed with its error; the questionnaire is changed and published
        # (version 1.2), and the response processed again from the console.
        driver.get(CONSOLE + f"/studies/{STUDY}/processing")
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#failed tbody tr") or d.refresh(),
             "the failed response", seconds=30)
        failed = driver.find_elements(By.CSS_SELECTOR, "#failed tbody tr")
        assert len(failed) == 1 and "No published design of activity 'daily' at version '1.2'" in failed[0].text \
            and "/internal/" not in failed[0].text, \
            [f.text for f in failed]
        shot(driver, "study-processing")
        retitle_and_publish(driver, "Daily check-in, version 1.2")
        driver.get(CONSOLE + f"/studies/{STUDY}/processing")
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "#failed input[name=id]")), "the failed response's box")
        driver.find_element(By.CSS_SELECTOR, "#failed input[name=id]").click()
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.ID, "reprocess").click()
        wait(driver, gone(page), "the processing page after reprocessing")
        assert "1 responses went back to the queue" in driver.find_element(By.CSS_SELECTOR, "main").text
        assert driver.find_elements(By.ID, "no-failed"), "nothing is in error while it waits its turn"

        # The data grid: five rows of "daily" once the reprocessed response is stored, sorted by
        # a column's heading either way and filtered to one participant.
        driver.get(CONSOLE + f"/studies/{STUDY}/data")
        daily_rows = "#tables tr[data-table='daily'] td.number"
        wait(driver, lambda d: [c for c in d.find_elements(By.CSS_SELECTOR, daily_rows) if c.text == "5"] or d.refresh(),
             "five rows in the daily table", seconds=30)
        shot(driver, "study-data")
        driver.find_element(By.LINK_TEXT, "daily").click()
        wait(driver, EC.presence_of_element_located((By.ID, "grid")), "the daily grid")
        assert len(driver.find_elements(By.CSS_SELECTOR, "#grid tbody tr")) == 5
        driver.find_element(By.CSS_SELECTOR, "#grid th[data-column='q8'] a").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "#grid[data-sort='q8'][data-order='asc']")), "sorted by q8")
        assert column(driver, "q8") == ["1", "2", "3", "4", "5"], column(driver, "q8")
        driver.find_element(By.CSS_SELECTOR, "#grid th[data-column='q8'] a").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "#grid[data-order='desc']")), "sorted by q8, descending")
        assert column(driver, "q8") == ["5", "4", "3", "2", "1"], column(driver, "q8")
        assert driver.find_element(By.CSS_SELECTOR, "#grid th[data-column='q8']").get_attribute("aria-sort") == "descending"
        shot(driver, "study-grid")
        # One identity: the number in the grid is the one the participants list names Ben by,
        # and it opens his page (the cell's second link filters the grid to him).
        numbers = [cell.split()[0] for cell in column(driver, "ParticipantId")]
        ben_number = numbers[column(driver, "q8").index("1")]
        assert f"Participant {ben_number}" in ben_row, (ben_number, ben_row)
        driver.find_element(By.CSS_SELECTOR, f"#grid tbody td a[href$='/participants/{ben_number}']").click()
        wait(driver, EC.url_to_be(ben_page), "Ben's page from his number in the grid")
        assert driver.find_element(By.ID, "participant-title").text == f"Participant {ben_number}"
        driver.back()
        wait(driver, EC.presence_of_element_located((By.ID, "grid")), "the grid again after Ben's page")
        cai_number = numbers[column(driver, "q8").index("5")]
        fill(driver, "participant", cai_number)
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "form.filters button[type=submit]").click()
        wait(driver, gone(page), "the grid filtered to Cai")
        assert column(driver, "q11") == ["cai's morning"], column(driver, "q11")

        # The column picker: a column unticked is hidden in every row and stays hidden on the
        # next visit (kept in this browser); ticked again, it is back.
        picker = driver.find_element(By.ID, "column-picker")
        assert picker.is_displayed(), "the column picker is shown where the script runs"
        picker.find_element(By.TAG_NAME, "summary").click()
        picker.find_element(By.XPATH, ".//label[normalize-space()='q8']/input").click()
        assert not driver.find_element(By.CSS_SELECTOR, "#grid th[data-column='q8']").is_displayed()
        assert all(not cell.is_displayed() for cell in driver.find_elements(By.CSS_SELECTOR, "#grid tbody tr td:nth-child(%d)" % (
            1 + [th.get_attribute("data-column") for th in driver.find_elements(By.CSS_SELECTOR, "#grid thead th")].index("q8"))))
        assert "16 of" in picker.find_element(By.TAG_NAME, "summary").text, picker.find_element(By.TAG_NAME, "summary").text
        driver.refresh()
        wait(driver, EC.presence_of_element_located((By.ID, "grid")), "the grid again")
        assert not driver.find_element(By.CSS_SELECTOR, "#grid th[data-column='q8']").is_displayed(), "the choice is kept"
        shot(driver, "study-grid-columns")
        picker = driver.find_element(By.ID, "column-picker")
        picker.find_element(By.TAG_NAME, "summary").click()
        picker.find_element(By.XPATH, ".//label[normalize-space()='q8']/input").click()
        assert driver.find_element(By.CSS_SELECTOR, "#grid th[data-column='q8']").is_displayed()

        # The exports: the page's progress bar runs to the end, and the files hold the rows.
        driver.get(CONSOLE + f"/studies/{STUDY}/data")
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "a[data-export-progress][href$='export.zip']")), "the export links")
        driver.find_element(By.CSS_SELECTOR, "a[data-export-progress][href$='export.zip']").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "#export-progress[data-state='done']")), "the export's progress", 60)
        progress = driver.find_element(By.CSS_SELECTOR, "#export-progress progress").get_attribute("value")
        assert float(progress) == 1.0, progress
        no_browser_errors(driver)
        import io
        import zipfile
        def export_zip():
            archive = zipfile.ZipFile(io.BytesIO(download(CONSOLE + f"/studies/{STUDY}/data/export.zip", cookie)))
            return archive, json.loads(archive.read("manifest.json"))
        # Beside the activity's tables, the adherence registration counted from Ben's runs: it
        # reaches the response service through registration's outbox, so it may take a moment.
        archive, manifest = export_zip()
        deadline = time.time() + 30
        while "RunAdherence" not in [table["table"] for table in manifest["tables"]] and time.time() < deadline:
            time.sleep(0.5)
            archive, manifest = export_zip()
        assert [(table["table"], table["rows"]) for table in manifest["tables"] if table["table"] != "RunAdherence"] == \
            [("daily", 5), ("dailyq6", 0), ("dailysymptoms", 0)], manifest
        adherence = [table for table in manifest["tables"] if table["table"] == "RunAdherence"]
        assert len(adherence) == 1 and adherence[0]["rows"] >= 1, manifest
        assert {"ActivityId", "Week", "RunsOpened", "RunsCompleted", "RunsMissed", "RunsExpired", "CountedAt"} <= \
            {column["name"] for column in adherence[0]["columns"]}, adherence
        with archive.open("daily.csv") as daily_file:
            import csv
            exported = list(csv.DictReader(io.TextIOWrapper(daily_file, encoding="utf-8", newline="")))
        assert sorted(row["q8"] for row in exported) == ["1", "2", "3", "4", "5"], exported
        lines = [json.loads(line) for line in download(CONSOLE + f"/studies/{STUDY}/data/export.jsonl", cookie).decode().splitlines()]
        # Tables come in the order they were made: RunAdherence's first week may come before or
        # after the first response was stored.
        made = [line["table"] for line in lines if "columns" in line]
        assert [table for table in made if table != "RunAdherence"] == ["daily", "dailyq6", "dailysymptoms"], lines
        assert made.count("RunAdherence") == 1, lines
        assert sorted(line["row"]["q11"] for line in lines if line["table"] == "daily" and "row" in line) == \
            sorted(["slept well", "short night", "woke twice", "cai's morning", "from a newer app"]), lines

        # The charts, read from their SVG: Ben enrolled at North Clinic (Cai has no account in
        # registration), five responses to "daily" today, and Ben up to date on it.
        driver.get(CONSOLE + f"/studies/{STUDY}/charts")
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "svg#responses-chart")), "the charts")
        sites = {g.get_attribute("data-series"): g.get_attribute("data-total")
                 for g in driver.find_elements(By.CSS_SELECTOR, "svg#enrollment-chart g[data-total]")}
        assert sites == {"North Clinic": "1"}, sites
        columns = chart_marks(driver, "responses-chart", "rect")
        assert [(series, value) for series, _, value in columns] == [("daily", 5)], columns
        bars = {series: value for series, _, value in chart_marks(driver, "adherence-chart", "rect")}
        assert bars == {"Up to date": 1}, bars
        shot(driver, "study-charts")
        no_browser_errors(driver)

        # The viewer again: pseudonymous ids and no address, no PDF link, and the PDF refused.
        viewer = browser()
        try:
            sign_in(viewer, viewer_email, viewer_password, "the viewer, again")
            viewer.get(CONSOLE + f"/studies/{STUDY}/participants")
            wait(viewer, EC.presence_of_element_located((By.ID, "participants")), "the viewer's participants page")
            assert ben not in viewer.find_element(By.CSS_SELECTOR, "main").text
            viewer.get(ben_page)
            wait(viewer, EC.presence_of_element_located((By.ID, "consents")), "Ben's page for the viewer")
            text = viewer.find_element(By.CSS_SELECTOR, "main").text
            assert ben not in text and "PDF kept (study admins download it)" in text, text
            assert not viewer.find_elements(By.CSS_SELECTOR, "#consents a[href$='/pdf']")
            viewer_cookie = "=".join(session_cookie(viewer))
            status, _, _ = raw("GET", pdf_link.replace(CONSOLE, ""), viewer_cookie)
            assert status == 403, status
        finally:
            viewer.quit()

        # The demo app's push credentials: a key that is not one is refused, and nothing is stored.
        driver.find_element(By.LINK_TEXT, "Apps").click()
        wait(driver, EC.presence_of_element_located((By.LINK_TEXT, "Push credentials")), "the apps page")
        shot(driver, "apps")
        driver.get(CONSOLE + "/apps/DEMOAPP/push")
        wait(driver, EC.presence_of_element_located((By.ID, "teamId")), "the push credentials page")
        fill(driver, "teamId", "TEAM123456")
        fill(driver, "keyId", "KEY1234567")
        fill(driver, "privateKey", "not a key")
        fill(driver, "topic", "org.studystack.demo")
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "form[action$='/push/ios'] button[type=submit]").click()
        wait(driver, gone(page), "the push page after a refused upload")
        assert driver.find_elements(By.CSS_SELECTOR, ".alert.error"), "the refusal is shown"
        assert "No push credentials yet" in driver.find_element(By.CSS_SELECTOR, "main").text

        # Then the real files, chosen in the file inputs as an admin does: an APNs .p8 key and a
        # Firebase service-account file (keys made here by openssl, as Apple and Google make them).
        keys = tempfile.mkdtemp()
        p8 = os.path.join(keys, "AuthKey_KEY1234567.p8")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p8], check=True,
                       capture_output=True)
        rsa = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"], check=True,
                             capture_output=True, text=True).stdout
        account = os.path.join(keys, "demo-firebase-adminsdk.json")
        with open(account, "w") as out:
            json.dump({"type": "service_account", "project_id": "studystack-demo", "private_key_id": "k1", "private_key": rsa,
                       "client_email": "push@studystack-demo.iam.gserviceaccount.com",
                       "token_uri": "https://oauth2.googleapis.com/token"}, out)
        fill(driver, "teamId", "TEAM123456")
        fill(driver, "keyId", "KEY1234567")
        fill(driver, "topic", "org.studystack.demo")
        driver.find_element(By.ID, "privateKeyFile").send_keys(p8)
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "form[action$='/push/ios'] button[type=submit]").click()
        wait(driver, gone(page), "the push page after uploading the .p8 file")
        driver.find_element(By.ID, "serviceAccountFile").send_keys(account)
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "form[action$='/push/android'] button[type=submit]").click()
        wait(driver, gone(page), "the push page after uploading the service-account file")
        table = driver.find_element(By.CSS_SELECTOR, "table.list").text
        assert "iOS (APNs)" in table and "KEY1234567" in table, table
        assert "Android (Firebase)" in table and "studystack-demo" in table, table
        assert not driver.find_elements(By.CSS_SELECTOR, ".alert.error"), driver.find_element(By.CSS_SELECTOR, "main").text
        shot(driver, "app-push")
        # Removed again, one platform at a time (the app then sends no notifications).
        for _ in range(2):
            page = driver.find_element(By.CSS_SELECTOR, "main")
            driver.find_element(By.CSS_SELECTOR, "form[action$='/push/remove'] button[type=submit]").click()
            wait(driver, gone(page), "the push page after removing a credential")
        assert "No push credentials yet" in driver.find_element(By.CSS_SELECTOR, "main").text

        # A schema study: made from the schema app's demo protocol through the console's form (the
        # file chosen as a researcher would), its QR code read back from the page by zbarimg, a
        # broken protocol refused with its place, launched; then the app's own multipart POST,
        # and the participant shows with the arm the server gave them.
        driver.get(CONSOLE + "/studies/new/schema")
        wait(driver, EC.presence_of_element_located((By.ID, "studyId")), "the new schema study form")
        fill(driver, "studyId", "SCHEMA1")
        fill(driver, "timeZone", "Australia/Melbourne")
        driver.find_element(By.ID, "protocolFile").send_keys(os.path.join(ROOT, "Tests/Fixtures/schema/demo_protocol.json"))
        driver.find_element(By.CSS_SELECTOR, "form[action='/studies/new/schema'] button[type=submit]").click()
        wait(driver, EC.url_contains("/studies/SCHEMA1/schema"), "the new schema study's page")
        protocol_url = driver.find_element(By.ID, "protocol-url").text
        assert protocol_url == METADATA + "/schema/SCHEMA1/protocol", protocol_url
        folder = tempfile.mkdtemp()
        qr_png = os.path.join(folder, "qr.png")
        with open(qr_png, "wb") as out:
            out.write(driver.find_element(By.CSS_SELECTOR, "figure.qr svg").screenshot_as_png)
        read = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", qr_png], check=True,
                              capture_output=True, text=True).stdout.strip()
        assert read == protocol_url, (read, protocol_url)
        arms_text = driver.find_element(By.ID, "arms").text
        assert "Control" in arms_text and "Treatment" in arms_text, arms_text
        shot(driver, "schema-study")
        fill(driver, "protocol", '{"properties": {"conditions": []}, "modules": []}')
        page = driver.find_element(By.CSS_SELECTOR, "main")
        driver.find_element(By.CSS_SELECTOR, "form[action='/studies/SCHEMA1/schema'] button[type=submit]").click()
        wait(driver, gone(page), "the schema page after a broken protocol")
        problems = driver.find_element(By.ID, "problems").text
        assert "Not imported" in problems and "properties › study_id" in problems, problems
        driver.find_element(By.LINK_TEXT, "Actions and versions").click()
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "input[name=action][value=launch]")), "the schema study's actions")
        driver.find_element(By.XPATH, "//input[@value='launch']/ancestor::form//button").click()
        wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Done: launch."), "the schema study's launch")
        served = json.load(urllib.request.urlopen(urllib.request.Request(
            protocol_url, data=b"seed=f2d91e73", headers={"Content-Type": "application/x-www-form-urlencoded"})))
        assert served["properties"]["post_url"] == RESPONSE + "/schema/SCHEMA1/data", served["properties"]
        boundary = "----WebKitFormBoundaryBrowserJourney"
        fields = [("data_type", "survey_response"), ("user_id", "23456789"), ("study_id", "3ZDOGAH"), ("module_index", "1"),
                  ("module_name", "Elements"), ("responses", json.dumps({"text-71nnpqzi": "from the browser test", "slider-0yih1evt": 4})),
                  ("response_time", "2026-11-26T09:52:00+11:00"), ("alert_time", "2026-11-26T09:41:00+11:00"), ("platform", "android")]
        body = "".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n' for name, value in fields)
        body += f"--{boundary}--\r\n"
        post = urllib.request.Request(served["properties"]["post_url"], data=body.encode(),
                                      headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        for _ in range(150):
            try:
                with urllib.request.urlopen(post) as reply:
                    assert reply.read() == b"true"
                    break
            except urllib.error.HTTPError as refused:
                assert refused.code == 404, refused.code  # the launch has not reached the response service yet
                time.sleep(0.1)
        else:
            raise AssertionError("the schema study's data URL never took the POST")
        driver.get(CONSOLE + "/studies/SCHEMA1/schema")
        wait(driver, EC.presence_of_element_located((By.ID, "schema-participants")), "the schema study's participants")
        row = driver.find_element(By.CSS_SELECTOR, "#schema-participants tbody tr").text
        assert "23456789" in row and ("Control" in row or "Treatment" in row), row
        assert "Yes" in driver.find_element(By.ID, "served").text
        shot(driver, "schema-participants")
        driver.get(CONSOLE + "/studies/SCHEMA1/schema/sheet")
        wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "figure.qr-large svg")), "the printable QR code")
        shot(driver, "schema-sheet")

        test_mode(driver)
        study_files(driver)
        fhir_clients(driver)
        move_in(driver)
        consent_change(driver, ben_user, spare_token, consent_version)

        # axe-core over every page an admin reaches by links (each page seen above was checked
        # as it was shown): no violation anywhere.
        pages = accessibility.crawl(driver, CONSOLE, ["/", f"/studies/{STUDY}", "/studies/DEMOSTUDY", "/studies/SCHEMA1"],
                                    lambda path: page_kind(path, signed_in_cookie))
        assert len(pages) >= 40, f"the crawl reached only {len(pages)} pages: {pages}"
        accessibility.report()
        axe_summary = (f"axe-core found no violation on {len(accessibility.checked)} pages ({len(pages)} reached by links, "
                       f"{accessibility.seconds:.0f} s in axe-core)")

        # The study's summary, then signing out ends the session.
        driver.get(CONSOLE + f"/studies/{STUDY}/basics")
        wait(driver, EC.presence_of_element_located((By.LINK_TEXT, "Summary")), "the study's pages again")
        driver.find_element(By.LINK_TEXT, "Summary").click()
        wait(driver, EC.title_contains("Sleep and mood"), "the study overview")
        shot(driver, "study-overview")
        driver.find_element(By.CSS_SELECTOR, "form[action='/signout'] button").click()
        wait(driver, EC.presence_of_element_located((By.ID, "email")), "the sign-in form after signing out")
        driver.get(CONSOLE + f"/studies/{STUDY}/basics")
        wait(driver, EC.url_contains("/signin"), "a page after signing out sends the browser to sign in")
        assert not [c for c in driver.get_cookies() if "session" in c["name"]], driver.get_cookies()
        # The token ended everywhere: the cookie as it was before signing out (a copy someone
        # kept, or another replica) still opens, but study-metadata refuses its token.
        status, location, _ = raw("GET", f"/studies/{STUDY}/basics", signed_in_cookie)
        assert status == 303 and location.startswith("/signin"), (status, location)
        print(f"console journey: passed; {axe_summary}; screenshots in {SHOTS}")
    finally:
        driver.quit()


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        # The line that failed, too: not every check has a message of its own.
        where = traceback.extract_tb(failure.__traceback__)[-1]
        print(f"console journey: FAILED at line {where.lineno} ({where.line}): {failure}", file=sys.stderr)
        sys.exit(1)
