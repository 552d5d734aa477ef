"""The console in a real browser: headless Chromium driven by selenium, against the running
platform (scripts/platform-test.sh starts it). An admin signs in with the credentials make run
prints, creates a study through the forms only, edits its sections, sees a refused save explained
at the field, and signs out. What the forms saved is then read back from the admin API, so the
test checks what an app would be served, not what the page shows.

Environment: CONSOLE_URL, STUDY_METADATA_URL, ADMIN_EMAIL, ADMIN_PASSWORD, SCREENSHOTS (a folder).
"""
import json
import os
import sys
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

CONSOLE = os.environ["CONSOLE_URL"].rstrip("/")
METADATA = os.environ["STUDY_METADATA_URL"].rstrip("/")
EMAIL = os.environ["ADMIN_EMAIL"]
PASSWORD = os.environ["ADMIN_PASSWORD"]
SHOTS = os.environ["SCREENSHOTS"]
STUDY = "BROWSER1"


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
        return WebDriverWait(driver, seconds, poll_frequency=0.1).until(condition)
    except Exception:
        shot(driver, "failure")
        raise AssertionError(f"{what} (after {seconds} s, at {driver.current_url})")


def shot(driver, name):
    """A screenshot of the whole page (the window grown to the page's height)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, max(900, min(height, 4000)))
    driver.save_screenshot(os.path.join(SHOTS, f"{name}.png"))
    driver.set_window_size(1280, 900)


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
        driver.find_element(By.CSS_SELECTOR, "button.primary[type=submit]").click()
        wait(driver, EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main"), "Saved"), "the saved notice on basics")
        assert driver.find_element(By.ID, "f-sponsor-en").get_attribute("value") == "Sleep Lab <North>"
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

        # The overview, then signing out ends the session.
        driver.find_element(By.LINK_TEXT, "Overview").click()
        wait(driver, EC.title_contains("Sleep and mood"), "the study overview")
        shot(driver, "study-overview")
        driver.find_element(By.CSS_SELECTOR, "form[action='/signout'] button").click()
        wait(driver, EC.presence_of_element_located((By.ID, "email")), "the sign-in form after signing out")
        driver.get(CONSOLE + f"/studies/{STUDY}/basics")
        wait(driver, EC.url_contains("/signin"), "a page after signing out sends the browser to sign in")
        assert not [c for c in driver.get_cookies() if "session" in c["name"]], driver.get_cookies()
        print(f"console journey: passed; screenshots in {SHOTS}")
    finally:
        driver.quit()


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        print(f"console journey: FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
