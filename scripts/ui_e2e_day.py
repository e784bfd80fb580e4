"""A product manager's day of flag work on the admin page, in a real browser.

Run by scripts/ui_e2e.py (which holds the browser harness: `h.expect`, `h.api`, `h.visit`,
`h.submit`, `h.shot`, `h.axe`, `h.sign_in`, `h.sign_out`). Every step is done through the
page's forms and checked through the admin API, the frontend API (a frontend key) or the
page itself; every page visited gets a screenshot and an axe-core run.
"""

import json
import time
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

FLAG = "nordic-checkout"
FEATURE = f"/admin/projects/default/features/{FLAG}"
STRATEGIES = f"/api/admin/projects/default/features/{FLAG}/environments/production"


def field(driver, element_id):
    return driver.find_element(By.ID, element_id)


def typed(driver, element_id, text):
    element = field(driver, element_id)
    element.clear()
    element.send_keys(text)


def button(driver, text):
    """The submit button whose text is `text` in the page's main part."""
    for b in driver.find_elements(By.CSS_SELECTOR, "main button"):
        if b.text.strip() == text:
            return b
    raise AssertionError(f"no button {text!r} on {driver.current_url}")


def redrawn_by(h, driver, select_id, value):
    """Choose `value` in the select `select_id`, whose change makes the script redraw the
    form (its "Update the form" button), and wait for the new page."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait
    old = driver.find_element(By.TAG_NAME, "html")
    Select(field(driver, select_id)).select_by_value(value)

    def gone(_driver):
        try:
            old.is_enabled()
            return False
        except WebDriverException:
            return True

    WebDriverWait(driver, 30).until(gone)
    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return document.readyState") == "complete")


def link(driver, text):
    return driver.find_element(By.LINK_TEXT, text)


def flash(driver):
    found = driver.find_elements(By.CSS_SELECTOR, "p.flash")
    return found[0].text if found else ""


def strategies(h):
    status, env = h.api("GET", STRATEGIES)
    return env.get("strategies", []) if status == 200 else []


def frontend(h, key, user, country):
    """The frontend API's answer for the flag: (enabled, variant) or None when not listed."""
    query = urllib.parse.urlencode({"userId": user, "properties[country]": country})
    status, body = h.api("GET", f"/api/frontend?{query}", key=key)
    assert status == 200, (status, body)
    for toggle in body["toggles"]:
        if toggle["name"] == FLAG:
            return toggle["enabled"], toggle.get("variant")
    return None


def frontend_eventually(h, key, user, country, wanted, seconds=10):
    """The frontend API's answer once it is `wanted` (its documents follow each change)."""
    deadline = time.time() + seconds
    answer = frontend(h, key, user, country)
    while not wanted(answer) and time.time() < deadline:
        time.sleep(0.2)
        answer = frontend(h, key, user, country)
    return answer


def playground_row(h, driver, user, country):
    """The playground's verdict for the flag: (enabled, the row's text)."""
    h.visit(driver, "/admin/playground", f"playground-{country}")
    Select(field(driver, "environment")).select_by_value("production")
    typed(driver, "context.userId", user)
    typed(driver, "context.properties", f"country={country}")
    typed(driver, "q", FLAG)
    h.submit(driver, button(driver, "Evaluate"))
    h.shot(driver, f"playground-{country}-result")
    h.axe(driver, f"playground result ({country})")
    row = driver.find_element(By.CSS_SELECTOR, f"tr[data-flag='{FLAG}']")
    verdict = row.find_element(By.CSS_SELECTOR, "td.verdict").text.strip()
    return verdict == "enabled", row.get_attribute("textContent")


def run(h, driver, vera_key):
    h.sign_out(driver)
    h.sign_in(driver, h.ADMIN_KEY)

    # --- a context field with legal values
    h.visit(driver, "/admin/context", "context-fields")
    h.visit(driver, "/admin/context/new", "context-field-new")
    typed(driver, "name", "country")
    typed(driver, "legalValues.0.value", "NO")
    h.submit(driver, button(driver, "Add a legal value"))
    typed(driver, "legalValues.1.value", "SE")
    h.submit(driver, button(driver, "Add a legal value"))
    typed(driver, "legalValues.2.value", "DK")
    h.submit(driver, button(driver, "Save the context field"))
    status, country = h.api("GET", "/api/admin/context/country")
    values = [v["value"] for v in country.get("legalValues", [])]
    h.expect(status == 200 and values == ["NO", "SE", "DK"], f"the context field has its legal values {values}")
    h.shot(driver, "context-field-saved")

    # --- a segment: users whose id starts with "user-"
    h.visit(driver, "/admin/segments/new", "segment-new")
    typed(driver, "name", "early-users")
    Select(field(driver, "constraints.add")).select_by_value("userId")
    h.submit(driver, button(driver, "Add a constraint"))
    # The script redraws the form on an operator change; the values stay a text area.
    redrawn_by(h, driver, "constraints.0.operator", "STR_STARTS_WITH")
    typed(driver, "constraints.0.values", "user-")
    h.submit(driver, button(driver, "Save the segment"))
    status, segments = h.api("GET", "/api/admin/segments")
    segment = next((s for s in segments["segments"] if s["name"] == "early-users"), None)
    h.expect(segment is not None and segment["constraints"][0]["operator"] == "STR_STARTS_WITH",
             f"the API has the segment {segment}")
    h.visit(driver, "/admin/segments", "segments")

    # --- a flag: a taken name first (refused next to the field), then its own
    h.visit(driver, "/admin/projects/default/new-feature", "feature-new")
    typed(driver, "name", "checkout")
    Select(field(driver, "type")).select_by_value("release")
    typed(driver, "description", "Checkout for the Nordics")
    h.submit(driver, button(driver, "Create the feature"))
    error = driver.find_elements(By.ID, "name.error")
    h.expect(error and "already exists" in error[0].text
             and "name.error" in field(driver, "name").get_attribute("aria-describedby"),
             "a taken name is refused next to the field")
    h.shot(driver, "feature-new-refused")
    h.axe(driver, "feature-new-refused")
    typed(driver, "name", FLAG)
    h.submit(driver, button(driver, "Create the feature"))
    status, feature = h.api("GET", f"/api/admin/projects/default/features/{FLAG}")
    h.expect(status == 200 and feature["description"] == "Checkout for the Nordics", "the flag is created")

    # --- a 25 % rollout in production where country is NO or SE, in the segment; 150 % first
    h.visit(driver, FEATURE, "feature-created")
    h.submit(driver, link(driver, "Add a strategy in production"))
    h.shot(driver, "strategy-kinds")
    h.axe(driver, "strategy-kinds")
    h.submit(driver, driver.find_element(By.CSS_SELECTOR, "a[href$='type=flexibleRollout']"))
    Select(field(driver, "constraints.add")).select_by_value("country")
    h.submit(driver, button(driver, "Add a constraint"))
    field(driver, "constraints.0.values.0").click()  # NO
    field(driver, "constraints.0.values.1").click()  # SE
    field(driver, f"segments.{segment['id']}").click()
    typed(driver, "parameters.rollout", "150")
    share = field(driver, "parameters.rollout.share").text
    h.expect("0–100" in share, f"the share says 150 is no percentage ({share})")
    h.submit(driver, button(driver, "Save the strategy"))
    error = driver.find_elements(By.ID, "parameters.rollout.error")
    h.expect(error and "0–100" in error[0].text, "150 % is refused with the reason next to the rollout")
    h.shot(driver, "strategy-150-refused")
    h.axe(driver, "strategy-150-refused")
    h.expect(strategies(h) == [], "the refusal changed nothing")
    typed(driver, "parameters.rollout", "25")
    share = field(driver, "parameters.rollout.share").text
    h.expect(share == "25 % of users", f"the share follows the rollout ({share})")
    h.submit(driver, button(driver, "Save the strategy"))
    listed = strategies(h)
    h.expect(len(listed) == 1 and listed[0]["parameters"]["rollout"] == "25"
             and listed[0]["constraints"][0]["values"] == ["NO", "SE"]
             and listed[0]["segments"] == [segment["id"]], f"the API has the rollout {listed}")
    rollout_id = listed[0]["id"] if listed else ""

    # --- switched on; the summary says who gets it
    h.submit(driver, driver.find_element(
        By.CSS_SELECTOR, f"button[aria-label^='{FLAG} in production: off']"))
    summary = driver.find_element(By.CSS_SELECTOR, "span.summary[data-environment='production']").text
    h.expect("25 % of users where country is NO or SE and in segment early-users" in summary,
             f"the production summary ({summary})")
    h.shot(driver, "feature-on")
    h.axe(driver, "feature-on")

    # --- the playground and the frontend API agree: a user in NO is in, in DK out
    status, token = h.api("POST", "/api/admin/api-tokens", {
        "tokenName": "ui-e2e-web", "type": "frontend", "environment": "production", "projects": ["*"]})
    assert status == 201, (status, token)
    key = token["secret"]
    user = None
    for n in range(400):
        answer = frontend_eventually(h, key, f"user-{n}", "NO", lambda a: a is not None, 5 if n == 0 else 0)
        if answer and answer[0]:
            user = f"user-{n}"
            break
    h.expect(user is not None, f"the frontend API lets some user in NO in ({user})")
    user = user or "user-0"
    in_no, row = playground_row(h, driver, user, "NO")
    h.expect(in_no, f"the playground agrees: {user} in NO is in ({row})")
    in_dk, row = playground_row(h, driver, user, "DK")
    h.expect(not in_dk and "country is NO or SE — ✗ fails" in row,
             f"the playground: {user} in DK is out, and why ({row})")
    answer = frontend(h, key, user, "DK")
    h.expect(answer is None or not answer[0], f"the frontend API agrees: DK is out ({answer})")

    # --- raised to 100 %
    h.visit(driver, f"{FEATURE}/environments/production/strategies/{rollout_id}", "strategy-edit")
    typed(driver, "parameters.rollout", "100")
    h.submit(driver, button(driver, "Save the strategy"))
    listed = strategies(h)
    h.expect(listed and listed[0]["parameters"]["rollout"] == "100", "the rollout is at 100 %")

    # --- a second strategy (the users vip-1 and vip-2), moved first
    h.visit(driver, f"{FEATURE}/environments/production/strategies/new?type=userWithId", "strategy-new-users")
    typed(driver, "parameters.userIds", "vip-1\nvip-2")
    h.submit(driver, button(driver, "Save the strategy"))
    listed = strategies(h)
    h.expect(len(listed) == 2 and listed[1]["parameters"]["userIds"] == "vip-1,vip-2",
             f"the second strategy is added {listed}")
    h.submit(driver, driver.find_element(By.CSS_SELECTOR, "button[aria-label^='Move strategy 2'][aria-label$=' up']"))
    listed = strategies(h)
    h.expect([s["name"] for s in listed] == ["userWithId", "flexibleRollout"], "the strategies are reordered")
    h.shot(driver, "strategies-reordered")

    # --- a strategy variant with a JSON payload reaches the frontend API
    h.visit(driver, f"{FEATURE}/environments/production/strategies/{rollout_id}", "strategy-variant")
    typed(driver, "variants.0.name", "blue")
    Select(field(driver, "variants.0.payloadType")).select_by_value("json")
    typed(driver, "variants.0.payloadValue", '{"color": "blue"}')
    h.submit(driver, button(driver, "Save the strategy"))
    answer = frontend_eventually(h, key, user, "NO", lambda a: a is not None and a[1] and a[1]["name"] == "blue")
    variant = answer[1] if answer else None
    h.expect(variant is not None and variant["name"] == "blue"
             and variant.get("payload") == {"type": "json", "value": '{"color": "blue"}'},
             f"the frontend API gives the strategy's variant with its payload {variant}")

    # --- archived (gone from the frontend API), revived, archived and deleted for good
    h.visit(driver, f"{FEATURE}/archive", "feature-archive-confirm")
    h.submit(driver, driver.find_element(By.CSS_SELECTOR, "main button.danger"))
    answer = frontend_eventually(h, key, user, "NO", lambda a: a is None)
    h.expect(answer is None, "an archived flag is gone from the frontend API")
    h.visit(driver, "/admin/archive", "archive")
    h.submit(driver, driver.find_element(By.CSS_SELECTOR, f"button[aria-label='Revive {FLAG}']"))
    status, _ = h.api("GET", f"/api/admin/projects/default/features/{FLAG}")
    h.expect(status == 200, "the flag is revived")
    h.visit(driver, f"{FEATURE}/archive", "feature-archive-again")
    h.submit(driver, driver.find_element(By.CSS_SELECTOR, "main button.danger"))
    h.visit(driver, "/admin/archive", "archive-again")
    h.submit(driver, driver.find_element(By.CSS_SELECTOR, f"a[href$='/archive/{FLAG}/delete']"))
    h.shot(driver, "delete-confirm")
    h.axe(driver, "delete-confirm")
    h.submit(driver, driver.find_element(By.CSS_SELECTOR, "main button.danger"))
    status, archive = h.api("GET", "/api/admin/archive/features")
    h.expect(FLAG not in [f["name"] for f in archive["features"]], "the flag is deleted for good")

    # --- found by search
    h.visit(driver, "/admin/search", "search")
    typed(driver, "q", "checkout")
    h.submit(driver, button(driver, "Search"))
    h.shot(driver, "search-results")
    h.axe(driver, "search results")
    found = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "main table a[href*='/features/']")]
    h.expect("checkout" in found, f"the search finds checkout {found}")

    # --- the remaining pages
    h.visit(driver, "/admin/context/country", "context-field-edit")
    h.visit(driver, f"/admin/segments/{segment['id']}", "segment-edit")
    h.visit(driver, "/admin/projects/default/features/checkout/settings", "feature-settings")
    h.visit(driver, "/admin/projects/default/features/checkout", "feature-checkout")

    # --- a Viewer: refused on each form, told why, nothing changed
    h.sign_out(driver)
    h.sign_in(driver, vera_key)
    refusals = [
        ("/admin/projects/default/new-feature", "Create the feature", "CREATE_FEATURE",
         lambda: typed(driver, "name", "viewer-flag")),
        ("/admin/projects/default/features/checkout/settings", "Save the settings", "UPDATE_FEATURE",
         lambda: typed(driver, "description", "the viewer was here")),
        ("/admin/projects/default/features/checkout/environments/production/strategies/new?type=default",
         "Save the strategy", "CREATE_FEATURE_STRATEGY", lambda: None),
        ("/admin/segments/new", "Save the segment", "CREATE_SEGMENT",
         lambda: typed(driver, "name", "viewer-segment")),
        (f"/admin/segments/{segment['id']}", "Save the segment", "UPDATE_SEGMENT",
         lambda: typed(driver, "name", "renamed-by-viewer")),
        ("/admin/context/new", "Save the context field", "CREATE_CONTEXT_FIELD",
         lambda: typed(driver, "name", "viewer-field")),
        ("/admin/context/country", "Save the context field", "UPDATE_CONTEXT_FIELD",
         lambda: typed(driver, "description", "the viewer was here")),
    ]
    _, events_before = h.api("GET", "/api/admin/events?limit=1")
    for path, label, permission, fill in refusals:
        driver.get(h.BASE + path)
        notice = driver.find_elements(By.CSS_SELECTOR, "p.warning[role=note]")
        h.expect(notice and permission in notice[0].text, f"the Viewer is told before trying on {path}")
        fill()
        h.submit(driver, button(driver, label))
        alert = driver.find_element(By.CSS_SELECTOR, "main [role=alert]").text
        h.expect(permission in alert, f"the Viewer is refused on {path} with the reason ({alert[:120]})")
    h.shot(driver, "viewer-refused-form")
    h.axe(driver, "viewer-refused-form")
    _, events_after = h.api("GET", "/api/admin/events?limit=1")
    h.expect(events_after["totalEvents"] == events_before["totalEvents"],
             "the Viewer's refused forms changed nothing")
    status, feature = h.api("GET", "/api/admin/projects/default/features/checkout")
    h.expect(feature.get("description") != "the viewer was here", "the settings are unchanged")
    print(json.dumps({"day": "done", "user": user}))
