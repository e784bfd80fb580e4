"""The admin page in a real browser: headless Chromium driven through WebDriver (selenium).

Run by scripts/ui-e2e.sh, which starts the server and passes BASE (http://host:port),
ADMIN_KEY, AXE (the path of axe-core's axe.min.js), SHOTS (the screenshot directory) and
FIXTURE (a real Unleash export). Each of the four operations is done through the page and its
result checked through the admin API; a Viewer's refusal, an XSS probe, the first-load weight
and axe-core's serious/critical violations are checked too; then a product manager's day of
flag work (scripts/ui_e2e_day.py). Exits non-zero if an expectation failed.
"""

import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE = os.environ["BASE"].rstrip("/")
ADMIN_KEY = os.environ["ADMIN_KEY"]
AXE = open(os.environ["AXE"], encoding="utf-8").read()
SHOTS = os.environ["SHOTS"]
FIXTURE = os.environ["FIXTURE"]
FIRST_LOAD_LIMIT = 100 * 1024

failures = []
checked = 0


def expect(condition, what):
    global checked
    checked += 1
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)
    else:
        print(f"ok: {what}")


def api(method, path, body=None, key=ADMIN_KEY):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Authorization", key)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request) as response:
            text = response.read().decode()
            return response.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as error:
        text = error.read().decode()
        try:
            return error.code, json.loads(text)
        except ValueError:
            return error.code, text


def seed():
    """What the pages act on, through the admin API."""
    status, _ = api("POST", "/api/admin/projects/default/features", {
        "name": "checkout",
        "description": "<script>window.__xss = 1</script> probe",
    })
    assert status == 201, status
    status, _ = api("PATCH",
                    "/api/admin/projects/default/features/checkout/environments/production/variants",
                    [{"op": "add", "path": "/-", "value": {
                        "name": "html", "weight": 0,
                        "payload": {"type": "string",
                                    "value": "<img src=x onerror=\"window.__xss = 2\">"}}}])
    assert status == 200, status
    status, _ = api("POST", "/api/admin/metrics/applications/legacy-app",
                    {"appName": "legacy-app", "description": "an application nobody runs"})
    assert status in (200, 202), status
    status, alice = api("POST", "/api/admin/user-admin",
                        {"name": "Alice Owner", "email": "alice@example.com", "rootRole": 2})
    assert status == 201, (status, alice)
    status, vera = api("POST", "/api/admin/user-admin",
                       {"name": "Vera Viewer", "email": "vera@example.com", "rootRole": 3})
    assert status == 201, (status, vera)
    status, token = api("POST", f"/api/admin/user-admin/{vera['id']}/tokens",
                        {"description": "vera's key"})
    assert status == 201, (status, token)
    return alice["id"], token["secret"]


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1000",
                 f"--user-data-dir={tempfile.mkdtemp(prefix='ui-e2e-chromium-')}"]:
        options.add_argument(flag)
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(60)
    return driver


shot_number = 0


def shot(driver, name):
    global shot_number
    shot_number += 1
    path = os.path.join(SHOTS, f"{shot_number:02d}-{name}.png")
    driver.save_screenshot(path)


def axe(driver, page):
    """Inject axe-core (through WebDriver, which the page's CSP does not govern) and run it."""
    result = driver.execute_async_script(
        AXE + "\n;var done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(function (r) {"
        " done(r.violations.map(function (v) { return {id: v.id, impact: v.impact,"
        " help: v.help, nodes: v.nodes.length}; })); });")
    serious = [v for v in result if v["impact"] in ("serious", "critical")]
    expect(not serious, f"axe-core: no serious or critical violation on {page} {serious}")


def first_load_bytes(driver):
    """The bytes the page and its resources took, as the browser fetched them."""
    return driver.execute_script(
        "var n = performance.getEntriesByType('navigation')[0];"
        "var total = n.encodedBodySize;"
        "performance.getEntriesByType('resource').forEach(function (r) {"
        " total += r.encodedBodySize; });"
        "return total;")


def no_foreign_requests(driver, page):
    foreign = driver.execute_script(
        "return performance.getEntriesByType('resource').map(function (r) { return r.name; })"
        ".filter(function (u) { return u.indexOf(location.origin) !== 0; });")
    expect(not foreign, f"no request leaves the origin on {page} {foreign}")


def submit(driver, element):
    """Click what submits a form or follows a link, and wait for the next page: the old
    page gone and the new one loaded (a click returns before the navigation ends)."""
    old = driver.find_element(By.TAG_NAME, "html")
    element.click()

    def gone(_driver):
        # Stale, or (Chromium, mid-navigation) "Node with given id does not belong to the
        # document": either way the old page is gone.
        try:
            old.is_enabled()
            return False
        except WebDriverException:
            return True

    WebDriverWait(driver, 30).until(gone)
    # The new document may still be replacing the old one: a script run then can fail.
    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return document.readyState") == "complete")


def visit(driver, path, name):
    driver.get(BASE + path)
    shot(driver, name)
    no_foreign_requests(driver, name)
    axe(driver, name)


def sign_in(driver, key):
    driver.get(BASE + "/admin")
    expect(driver.current_url.endswith("/admin/sign-in"), "an unsigned visit lands on sign-in")
    driver.find_element(By.ID, "key").send_keys(key)
    submit(driver, driver.find_element(By.CSS_SELECTOR, "form.narrow button[type=submit]"))


def sign_out(driver):
    submit(driver, driver.find_element(By.CSS_SELECTOR, "form.signout button"))


def main():
    os.makedirs(SHOTS, exist_ok=True)
    alice_id, vera_key = seed()
    driver = browser()
    try:
        run(driver, alice_id, vera_key)
    finally:
        driver.quit()
    print(f"{checked - len(failures)} passed, {len(failures)} failed")
    if failures:
        print("failed:\n  " + "\n  ".join(failures), file=sys.stderr)
    sys.exit(1 if failures else 0)


def run(driver, alice_id, vera_key):
    # --- sign-in, and the first load's weight (a fresh profile: nothing cached)
    driver.get(BASE + "/admin/sign-in")
    weight = first_load_bytes(driver)
    expect(weight <= FIRST_LOAD_LIMIT, f"first load {weight} bytes <= {FIRST_LOAD_LIMIT}")
    print(f"first load (sign-in page with its CSS and JS): {weight} bytes")
    shot(driver, "sign-in")
    axe(driver, "sign-in")
    sign_in(driver, ADMIN_KEY)
    expect(driver.find_element(By.TAG_NAME, "h1").text == "Projects", "signed in: the projects page")
    cookies = {c["name"]: c for c in driver.get_cookies()}
    session = cookies.get("toggle_admin_session")
    expect(session is not None and session["httpOnly"] and session.get("sameSite") == "Strict",
           "the session cookie is HttpOnly and SameSite=Strict")
    expect(ADMIN_KEY not in json.dumps(driver.get_cookies()), "no cookie holds the key")
    expect("toggle_admin_session" not in driver.execute_script("return document.cookie"),
           "scripts cannot read the session cookie")
    storage = driver.execute_script(
        "return JSON.stringify(localStorage) + JSON.stringify(sessionStorage)")
    expect(ADMIN_KEY not in storage and ADMIN_KEY not in driver.current_url,
           "the key is in no URL and no script-readable storage")
    shot(driver, "projects")
    axe(driver, "projects")

    # --- the XSS probe: a description and a payload holding HTML stay text
    visit(driver, "/admin/projects/default", "features")
    weight = first_load_bytes(driver)
    expect(weight <= FIRST_LOAD_LIMIT, f"features page load {weight} bytes <= {FIRST_LOAD_LIMIT}")
    expect(driver.execute_script("return window.__xss === undefined"), "the description's script did not run")
    expect("<script>window.__xss = 1</script> probe" in driver.find_element(By.TAG_NAME, "main").text,
           "the description is shown as text")
    visit(driver, "/admin/projects/default/features/checkout", "feature")

    # --- operation 1: variants, with a mistake, then corrected
    path = "/admin/projects/default/features/checkout/environments/production/variants"
    visit(driver, path, "variants")
    expect(driver.execute_script("return window.__xss === undefined"), "the payload's HTML did not run")
    expect(driver.find_element(By.ID, "v0.payloadValue").get_attribute("value")
           == "<img src=x onerror=\"window.__xss = 2\">", "the payload is shown as text")
    # The HTML variant goes; blue and a fixed green at 150 % (a mistake) come.
    driver.find_element(By.ID, "v0.remove").click()
    driver.find_element(By.ID, "v1.name").send_keys("blue")
    driver.find_element(By.ID, "add-row").click()
    driver.find_element(By.ID, "v2.name").send_keys("green")
    Select(driver.find_element(By.ID, "v2.weightType")).select_by_value("fix")
    driver.find_element(By.ID, "v2.weight").send_keys("150")
    share = driver.find_element(By.CSS_SELECTOR, "tr.variant:nth-child(3) .share").text
    expect(share == "150.0 %", f"the share follows the typed weight live ({share})")
    submit(driver, driver.find_element(By.CSS_SELECTOR, "button[value=save]"))
    errors = driver.find_elements(By.ID, "v2.weight.error")
    expect(len(errors) == 1 and errors[0].text != "", "the weight's error is shown next to it")
    shot(driver, "variants-error")
    status, current = api("GET", "/api/admin/projects/default/features/checkout/environments/production/variants")
    expect([v["name"] for v in current["variants"]] == ["html"], "a refused save changed nothing")
    weight_input = driver.find_element(By.ID, "v2.weight")
    weight_input.clear()
    weight_input.send_keys("25")
    submit(driver, driver.find_element(By.CSS_SELECTOR, "button[value=save]"))
    flash = driver.find_element(By.CSS_SELECTOR, "p.flash").text
    expect("Saved" in flash, f"saved ({flash})")
    shot(driver, "variants-saved")
    status, current = api("GET", "/api/admin/projects/default/features/checkout/environments/production/variants")
    got = [(v["name"], v["weight"], v.get("weightType")) for v in current["variants"]]
    expect(got == [("blue", 750, "variable"), ("green", 250, "fix")], f"the API has the new variants {got}")

    # --- operation 2: import a real Unleash export, planned first; then export
    visit(driver, "/admin/import", "import")
    Select(driver.find_element(By.ID, "project")).select_by_value("default")
    Select(driver.find_element(By.ID, "environment")).select_by_value("development")
    driver.find_element(By.ID, "file").send_keys(os.path.abspath(FIXTURE))
    submit(driver, driver.find_element(By.CSS_SELECTOR, "button[value=plan]"))
    main_text = driver.find_element(By.TAG_NAME, "main").text
    expect("Plan (" in main_text and "ex-a" in main_text, f"the export is planned ({main_text[:200]})")
    shot(driver, "import-planned")
    status, _ = api("GET", "/api/admin/projects/default/features/ex-a")
    expect(status == 404, "planning wrote nothing")
    # The plan's page holds the document and the plan's fingerprint: Import applies that plan.
    submit(driver, driver.find_element(By.CSS_SELECTOR, "button[value=import]"))
    main_text = driver.find_element(By.TAG_NAME, "main").text
    expect("2 created" in main_text, f"imported ({main_text[:200]})")
    shot(driver, "import-done")
    status, feature = api("GET", "/api/admin/projects/default/features/ex-a")
    expect(status == 200 and feature["type"] == "experiment", "the API has the imported feature")
    visit(driver, "/admin/export?project=default", "export")
    exported = driver.execute_async_script(
        "var done = arguments[0];"
        "fetch('/admin/export/download?environment=development&project=default')"
        ".then(function (r) { return r.json(); }).then(function (d) {"
        " done(d.features.map(function (f) { return f.name; })); })"
        ".catch(function (e) { done(['failed: ' + e]); });")
    expect("ex-a" in exported and "checkout" in exported, f"the export holds the features {exported}")

    # --- operation 3: delete an application, after confirming
    visit(driver, "/admin/applications", "applications")
    submit(driver, driver.find_element(By.CSS_SELECTOR, "a[aria-label='Delete legacy-app']"))
    shot(driver, "application-confirm")
    axe(driver, "application-confirm")
    submit(driver, driver.find_element(By.CSS_SELECTOR, "button.danger"))
    expect("Deleted the application legacy-app." in driver.find_element(By.CSS_SELECTOR, "p.flash").text,
           "the page says it deleted the application")
    status, _ = api("GET", "/api/admin/metrics/applications/legacy-app")
    expect(status == 404, "the API no longer has the application")

    # --- operation 4: project access
    visit(driver, "/admin/projects/default/access", "access")
    driver.find_element(By.ID, f"role.4.user.{alice_id}").click()
    submit(driver, driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]"))
    expect("Saved the access" in driver.find_element(By.CSS_SELECTOR, "p.flash").text, "access saved")
    status, access = api("GET", "/api/admin/projects/default/access")
    owners = [r for r in access["roles"] if r["id"] == 4]
    expect(owners and alice_id in owners[0]["users"], f"the API has Alice as owner {access}")

    # --- the supporting pages
    visit(driver, "/admin/keys", "keys")
    visit(driver, "/admin/events", "events")

    # --- a Viewer: may look, is refused with the reason
    sign_out(driver)
    expect(driver.current_url.endswith("/admin/sign-in"), "signed out")
    sign_in(driver, vera_key)
    driver.get(BASE + path)
    driver.find_element(By.ID, "v0.name").clear()
    driver.find_element(By.ID, "v0.name").send_keys("renamed")
    submit(driver, driver.find_element(By.CSS_SELECTOR, "button[value=save]"))
    alert = driver.find_element(By.CSS_SELECTOR, "main [role=alert]").text
    expect("UPDATE_FEATURE_ENVIRONMENT_VARIANTS" in alert, f"the Viewer is refused with the reason ({alert})")
    shot(driver, "viewer-refused")
    axe(driver, "viewer-refused")
    status, current = api("GET", "/api/admin/projects/default/features/checkout/environments/production/variants")
    expect([v["name"] for v in current["variants"]] == ["blue", "green"], "the refusal changed nothing")

    # --- a product manager's day: flags, strategies, constraints, segments, context fields,
    # the playground, the archive and search (scripts/ui_e2e_day.py)
    import types
    import ui_e2e_day
    harness = types.SimpleNamespace(
        BASE=BASE, ADMIN_KEY=ADMIN_KEY, expect=expect, api=api, visit=visit, submit=submit,
        shot=shot, axe=axe, sign_in=sign_in, sign_out=sign_out)
    ui_e2e_day.run(harness, driver, vera_key)


if __name__ == "__main__":
    main()
