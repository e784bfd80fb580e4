"""Helpers of scripts/schemathesis-unleash.sh.

As a program: write Unleash 6.10.1's OpenAPI document with its errata applied (argv[1] →
argv[2]). Each erratum makes the document say what Unleash 6.10.1 itself answers, as recorded
in tests/fixtures/unleash-compat/unleash-6.10.1.jsonl:

* POST /api/admin/features-batch/{import,validate,export} answer 400 BadDataError to a body
  that is not valid (recorded: export/missing-environment, validate/missing-data,
  import/missing-project, …); the document lists only 200 and 404.
* GET /api/admin/metrics/applications/{appName} answers `description`, `url`, `color` and
  `icon` as null when unset, and `createdAt`, `instances`, `seenToggles` and `links`
  (recorded: app/create-minimal); the document's applicationSchema has neither.

As a schemathesis hooks module (SCHEMATHESIS_HOOKS=unleash_contract): the check
`unleash_status_conformance`, schemathesis' status_code_conformance except that 405, 413 and
415 are allowed where undocumented (a wrong method, a body over the limit, a body that is not
JSON).
"""

import json
import sys

ALLOWED_UNDOCUMENTED = {405, 413, 415}

try:
    import schemathesis

    @schemathesis.check
    def unleash_status_conformance(ctx, response, case):
        responses = case.operation.definition.raw.get("responses", {})
        status = str(response.status_code)
        documented = {str(key).upper() for key in responses}
        if (
            status in documented
            or "DEFAULT" in documented
            or f"{status[0]}XX" in documented
            or response.status_code in ALLOWED_UNDOCUMENTED
        ):
            return None
        raise AssertionError(
            f"Undocumented status code {status}; documented: {', '.join(sorted(documented))}"
        )

except ImportError:  # used as a program, without schemathesis
    pass


def bad_request():
    return {
        "description": "The request body is not valid (errata: recorded from Unleash 6.10.1).",
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["id", "name", "message"],
                    "properties": {
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "message": {"type": "string"},
                        "details": {"type": "array"},
                    },
                }
            }
        },
    }


def apply_errata(document):
    for operation in ("import", "validate", "export"):
        responses = document["paths"][f"/api/admin/features-batch/{operation}"]["post"][
            "responses"
        ]
        responses.setdefault("400", bad_request())
    application = document["components"]["schemas"]["applicationSchema"]
    for member in ("description", "url", "color", "icon"):
        application["properties"][member]["nullable"] = True
    application["properties"]["createdAt"] = {"type": "string", "format": "date-time"}
    application["properties"]["instances"] = {"type": "array", "items": {"type": "object"}}
    application["properties"]["seenToggles"] = {"type": "array", "items": {"type": "string"}}
    application["properties"]["links"] = {
        "type": "object",
        "properties": {"self": {"type": "string"}},
    }
    return document


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as source:
        document = json.load(source)
    with open(sys.argv[2], "w", encoding="utf-8") as target:
        json.dump(apply_errata(document), target)
