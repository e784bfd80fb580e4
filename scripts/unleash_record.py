"""Records what Unleash 6.10.1 answers to a list of cases, for the Unleash replay suite.

    scripts/unleash-baseline.sh &        # Unleash 6.10.1 on a fresh database
    python3 scripts/unleash_record.py tests/fixtures/unleash-compat/control-plane.cases.jsonl \
        > tests/fixtures/unleash-compat/control-plane.jsonl

Each input line is a case of the recording format of tests/fixtures/unleash-compat/README.md
without the answers: `name, group, description, setup: [{method, path, auth, body?,
capture?}], request: {method, path, headers: {auth}, body?}, followup: [{request}]`. The
output is the same case with each set-up step's `status` (and `response` where it failed),
the request's `response: {status, body}` and each follow-up's `response`, recorded in order
on one server, as the replay suite replays them.

First it makes the state the cases assume (the README's "The state the cases assume"):
projects `other` and `patterned` and the environments of both, written into Unleash's
database (its open-source build has no API to create projects), the `default`
environment off and in no project, a Viewer user, and the callers: `admin` (the admin
token of scripts/unleash-baseline.sh), `pat` (a personal access token of the built-in root
`admin` user), `viewer` (one of the Viewer's), `client` (a client token for
default:development).

Environment: UNLEASH_URL (default http://127.0.0.1:4242), UNLEASH_ADMIN_TOKEN (default that
of unleash-baseline.sh), UNLEASH_DB and PGHOST/PGPORT/PGUSER as unleash-baseline.sh takes
them.
"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

URL = os.environ.get("UNLEASH_URL", "http://127.0.0.1:4242").rstrip("/")
ADMIN = os.environ.get("UNLEASH_ADMIN_TOKEN", "*:*.bench-admin-token")
DB = os.environ.get("UNLEASH_DB", "unleash_bench")
PAT = "user:toggle-admin-recorder-pat-of-admin-0000000000000000"
VIEWER_PAT = "user:toggle-admin-recorder-pat-of-viewer-00000000000000"


def sql(statement):
    """Runs `statement` on Unleash's database; returns what psql printed."""
    env = dict(os.environ)
    env.setdefault("PGHOST", "127.0.0.1")
    env.setdefault("PGPORT", "5432")
    env.setdefault("PGUSER", "postgres")
    out = subprocess.run(
        ["psql", "-d", DB, "-v", "ON_ERROR_STOP=1", "-tAc", statement],
        env=env, check=True, capture_output=True, text=True,
    )
    return out.stdout.strip()


def call(method, path, auth, body=None, raw_body=None, content_type=None):
    """One request as `auth`; returns (status, parsed body or text or None)."""
    headers = {}
    secret = CALLERS.get(auth)
    if secret is not None:
        headers["Authorization"] = secret
    data = None
    if raw_body is not None:
        data = raw_body.encode()
        headers["Content-Type"] = "application/json"
    elif body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(URL + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    if not text:
        return status, None
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


CALLERS = {"admin": ADMIN, "bogus": "bogus-key-nobody-has-0123456789", "none": None}


def world():
    """The state the cases assume, and the callers' secrets."""
    sql("""
        INSERT INTO projects (id, name, description) VALUES
            ('other', 'Other', null), ('patterned', 'Patterned', null)
        ON CONFLICT DO NOTHING;
        DELETE FROM project_environments WHERE environment_name = 'default';
        INSERT INTO project_environments (project_id, environment_name) VALUES
            ('default', 'development'), ('default', 'production'),
            ('other', 'development'), ('other', 'production'),
            ('patterned', 'development'), ('patterned', 'production')
        ON CONFLICT DO NOTHING;
        UPDATE environments SET enabled = false WHERE name = 'default';
        INSERT INTO project_settings (project, feature_naming_pattern, feature_naming_example,
                                      feature_naming_description, feature_limit)
            VALUES ('patterned', '^pat-[a-z0-9-]+$', 'pat-example', 'must start with pat-', 3)
        ON CONFLICT (project) DO UPDATE SET feature_naming_pattern = excluded.feature_naming_pattern,
            feature_naming_example = excluded.feature_naming_example,
            feature_naming_description = excluded.feature_naming_description,
            feature_limit = excluded.feature_limit;
    """)
    status, viewer = call("POST", "/api/admin/user-admin", "admin",
                          {"email": "viewer@example.com", "name": "Viewer", "rootRole": 3,
                           "sendEmail": False})
    if status != 201:
        sys.exit(f"creating the Viewer: {status} {viewer}")
    admin_id = sql("SELECT id FROM users WHERE username = 'admin'")
    sql(f"""
        INSERT INTO personal_access_tokens (secret, description, user_id, expires_at) VALUES
            ('{PAT}', 'recorder', {admin_id}, now() + interval '30 days'),
            ('{VIEWER_PAT}', 'recorder', {viewer['id']}, now() + interval '30 days');
    """)
    CALLERS["pat"] = PAT
    CALLERS["viewer"] = VIEWER_PAT
    status, client = call("POST", "/api/admin/api-tokens", "admin",
                          {"tokenName": "recorder-client", "type": "client",
                           "environment": "development", "projects": ["default"]})
    if status != 201:
        sys.exit(f"creating the client token: {status} {client}")
    CALLERS["client"] = client["secret"]


def substitute(value, variables):
    """`${name}` → the captured value: whole strings keep the value's type."""
    if isinstance(value, str):
        whole = re.fullmatch(r"\$\{(\w+)\}", value)
        if whole and whole.group(1) in variables:
            return variables[whole.group(1)]
        return re.sub(r"\$\{(\w+)\}", lambda m: str(variables.get(m.group(1), m.group(0))), value)
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    return value


def send(step, variables):
    headers = step.get("headers", {})
    auth = step.get("auth", headers.get("auth", "admin"))
    return call(step["method"], substitute(step["path"], variables), auth,
                body=substitute(step.get("body"), variables) if "body" in step else None,
                raw_body=step.get("raw_body"), content_type=headers.get("content-type"))


def record(case):
    variables = {}
    for step in case.get("setup", []):
        if "sleep" in step:
            time.sleep(step["sleep"])
            continue
        status, body = send(step, variables)
        step["status"] = status
        if status >= 400:
            step["response"] = body
            print(f"{case['name']}: set-up {step['method']} {step['path']} → {status} {body}",
                  file=sys.stderr)
        for var, member in step.get("capture", {}).items():
            if isinstance(body, dict):
                variables[var] = body.get(member)
    status, body = send(case["request"], variables)
    case["response"] = {"status": status, "body": body}
    for followup in case.get("followup", []):
        status, body = send(followup["request"], variables)
        followup["response"] = {"status": status, "body": body}
    return case


def main():
    world()
    with open(sys.argv[1]) as cases:
        for line in cases:
            if line.strip():
                print(json.dumps(record(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
