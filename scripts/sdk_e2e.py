"""A real Unleash SDK (Python UnleashClient) against the server.

Run by scripts/sdk-e2e.sh with BASE (http://host:port) and ADMIN_KEY set. Creates a client
key and four features with the admin API (a gradual rollout, a constraint, a strategy
variant, a dependency), lets the SDK register, fetch and evaluate them, send metrics, and
checks that the registration and the metrics show up in the admin API.
"""

import json
import os
import sys
import time
import urllib.request

from UnleashClient import UnleashClient

BASE = os.environ["BASE"]
ADMIN_KEY = os.environ["ADMIN_KEY"]
ENV = "development"
APP = "sdk-e2e"


def call(method, path, body=None, key=ADMIN_KEY):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Authorization", key)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        text = response.read()
        return json.loads(text) if text else None


def feature(name, strategy, parents=()):
    call("POST", "/api/admin/projects/default/features", {"name": name})
    base = f"/api/admin/projects/default/features/{name}"
    call("POST", f"{base}/environments/{ENV}/strategies", strategy)
    for parent in parents:
        call("POST", f"{base}/dependencies", {"feature": parent})
    call("POST", f"{base}/environments/{ENV}/on")


def check(what, actual, expected):
    status = "ok" if actual == expected else "FAILED"
    print(f"{status}: {what}: {actual!r} (expected {expected!r})")
    if actual != expected:
        check.failed = True


check.failed = False

feature(
    "e2e.rollout",
    {"name": "flexibleRollout", "parameters": {"rollout": "100", "stickiness": "default", "groupId": "e2e.rollout"}},
)
feature(
    "e2e.constraint",
    {
        "name": "default",
        "constraints": [{"contextName": "userId", "operator": "IN", "values": ["42"]}],
    },
)
feature(
    "e2e.variant",
    {
        "name": "flexibleRollout",
        "parameters": {"rollout": "100", "stickiness": "default", "groupId": "e2e.variant"},
        "variants": [
            {"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default",
             "payload": {"type": "string", "value": "sky"}}
        ],
    },
)
feature("e2e.child", {"name": "default"}, parents=["e2e.rollout"])

token = call("POST", "/api/admin/api-tokens",
             {"tokenName": "sdk-e2e", "type": "client", "environment": ENV})
key = token["secret"]
assert key.startswith("*:development."), key

client = UnleashClient(
    url=BASE + "/api",
    app_name=APP,
    instance_id="e2e-1",
    custom_headers={"Authorization": key},
    refresh_interval=1,
    metrics_interval=1,
)
client.initialize_client()
time.sleep(1)

check("rollout", client.is_enabled("e2e.rollout", {"userId": "7"}), True)
check("constraint, matching", client.is_enabled("e2e.constraint", {"userId": "42"}), True)
check("constraint, not matching", client.is_enabled("e2e.constraint", {"userId": "7"}), False)
variant = client.get_variant("e2e.variant", {"userId": "7"})
check("variant", (variant["name"], variant["enabled"], variant.get("payload")),
      ("blue", True, {"type": "string", "value": "sky"}))
check("dependency", client.is_enabled("e2e.child", {"userId": "7"}), True)
check("unknown", client.is_enabled("e2e.unknown", {}), False)

time.sleep(3)  # a metrics interval or two
client.destroy()

app = call("GET", f"/api/admin/metrics/applications/{APP}")
check("registered instance", [i["instanceId"] for i in app["instances"]], ["e2e-1"])
check("sdkVersion reported", bool(app.get("sdkVersion")), True)
usage = call("GET", "/api/admin/client-metrics/features/e2e.rollout")
yes = sum(m["yes"] for m in usage["lastHourUsage"])
check("metrics seen", yes >= 1, True)
check("application seen", usage["seenApplications"], [APP])

# A client key on an admin route: 403.
try:
    call("GET", "/api/admin/projects/default", key=key)
    check("client key on an admin route", 200, 403)
except urllib.error.HTTPError as e:
    check("client key on an admin route", e.code, 403)

sys.exit(1 if check.failed else 0)
