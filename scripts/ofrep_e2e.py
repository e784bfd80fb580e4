"""OpenFeature's OFREP provider for Python against the server, run by scripts/ofrep-e2e.sh with
BASE and CLIENT_KEY (a client key for project `default` in `development`)."""
import os
import sys

from openfeature import api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext
from openfeature.exception import ErrorCode

base, key = os.environ["BASE"], os.environ["CLIENT_KEY"]
api.set_provider(OFREPProvider(base, headers_factory=lambda: {"Authorization": key}))
client = api.get_client()
u1 = EvaluationContext("u1")
passed = failed = 0


def check(name, details, value, variant=None, reason=None, error=None):
    global passed, failed
    problems = []
    if details.value != value:
        problems.append(f"value {details.value!r} != {value!r}")
    if variant is not None and details.variant != variant:
        problems.append(f"variant {details.variant!r} != {variant!r}")
    if reason is not None and str(details.reason) != reason and getattr(details.reason, "value", None) != reason:
        problems.append(f"reason {details.reason!r} != {reason!r}")
    if details.error_code != error:
        problems.append(f"error {details.error_code!r} != {error!r} ({details.error_message})")
    if problems:
        failed += 1
        print(f"FAIL {name}: {'; '.join(problems)}")
    else:
        passed += 1
        print(f"ok   {name}")


check("python: TARGETING_MATCH", client.get_boolean_details("on", False, u1), True, "enabled", "TARGETING_MATCH")
check("python: DISABLED", client.get_boolean_details("on", True, EvaluationContext("u3")), False, "disabled", "DISABLED")
check("python: STATIC", client.get_boolean_details("everyone", False, u1), True, "enabled", "STATIC")
check("python: a string", client.get_string_details("text", "x", u1), "hello", "v1", "SPLIT")
check("python: an integer", client.get_integer_details("int", 0, u1), 42, "v1", "SPLIT")
check("python: a fraction", client.get_float_details("float", 0.0, u1), 2.5, "v1", "SPLIT")
check("python: an object", client.get_object_details("object", {}, u1), {"color": "red", "sizes": [1, 2]}, "v1", "SPLIT")
check("python: a missing flag", client.get_boolean_details("missing", True, u1), True, error=ErrorCode.FLAG_NOT_FOUND)
check("python: out of scope", client.get_boolean_details("hidden", False, u1), False, error=ErrorCode.FLAG_NOT_FOUND)
check("python: a type mismatch", client.get_integer_details("text", 7, u1), 7, error=ErrorCode.TYPE_MISMATCH)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
