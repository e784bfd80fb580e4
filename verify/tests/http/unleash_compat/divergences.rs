//! The deliberate divergences from Unleash 6.10.1: the kinds of case where our answer is
//! `BEHAVIOUR.md`'s, each with the rule it follows. A kind is recognised from the recorded
//! case **and our answer**, so that a case is divergent only when we answer as the rule
//! says (a different answer is a disagreement), and so that more cases of the same kind are
//! recognised too. `examples` names the recorded cases of the kind; the test checks that each
//! is recognised.

use std::collections::BTreeMap;

use serde_json::Value;

use super::normalise::{contains, normalise};

/// Our answer to a case's request.
pub struct Answer<'a> {
    pub status: u16,
    pub body: Option<&'a Value>,
}

impl Answer<'_> {
    /// The messages of our error body: the message and every detail's.
    fn messages(&self) -> Vec<&str> {
        let Some(body) = self.body else {
            return Vec::new();
        };
        let mut all: Vec<&str> = body["message"].as_str().into_iter().collect();
        for detail in body["details"].as_array().into_iter().flatten() {
            all.extend(detail["message"].as_str());
        }
        all
    }

    fn says(&self, text: &str) -> bool {
        self.messages().iter().any(|m| m.contains(text))
    }
}

/// One kind of deliberate divergence.
pub struct Divergence {
    /// The rule of `BEHAVIOUR.md` our answer follows.
    pub rule: &'static str,
    /// The recorded cases of this kind.
    pub examples: &'static [&'static str],
    /// Whether `case`, answered by us with `ours`, is of this kind.
    pub applies: fn(case: &Value, ours: &Answer<'_>) -> bool,
}

fn group(case: &Value) -> &str {
    case["group"].as_str().unwrap_or_default()
}

fn path(case: &Value) -> &str {
    case["request"]["path"].as_str().unwrap_or_default()
}

fn unleash_status(case: &Value) -> u16 {
    case["response"]["status"].as_u64().unwrap_or(0) as u16
}

fn unleash_message(case: &Value) -> String {
    let body = &case["response"]["body"];
    let mut all = body["message"].as_str().unwrap_or_default().to_owned();
    for detail in body["details"].as_array().into_iter().flatten() {
        all.push(' ');
        all.push_str(detail["message"].as_str().unwrap_or_default());
    }
    all
}

fn is_get(case: &Value) -> bool {
    case["request"]["method"] == "GET"
}

/// Both answered 200.
fn both_ok(case: &Value, ours: &Answer<'_>) -> bool {
    unleash_status(case) == 200 && ours.status == 200
}

/// The list `member` of Unleash's body and of ours (empty when absent).
fn lists<'a>(case: &'a Value, ours: &'a Answer<'_>, member: &str) -> (Vec<Value>, Vec<Value>) {
    let list = |body: Option<&Value>| -> Vec<Value> {
        body.and_then(|b| b[member].as_array().cloned())
            .unwrap_or_default()
    };
    (list(Some(&case["response"]["body"])), list(ours.body))
}

/// Whether `ours` shows every member of `theirs` but `except` (at the top of `theirs`) with an
/// equal value, both normalised.
fn agrees_except(theirs: &Value, ours: &Value, except: &[&str]) -> bool {
    let (mut theirs, mut ours) = (theirs.clone(), ours.clone());
    if let Some(object) = theirs.as_object_mut() {
        for member in except {
            object.remove(*member);
        }
    }
    normalise(&mut theirs, &BTreeMap::new());
    normalise(&mut ours, &BTreeMap::new());
    contains(&theirs, &ours).is_ok()
}

/// Whether `key` (a listed key) shows a secret.
fn shows_secret(key: &Value) -> bool {
    key.get("secret").is_some()
}

/// The variants a PATCH adds or replaces whole (`value` objects of its operations).
fn patch_values(case: &Value) -> Vec<&serde_json::Map<String, Value>> {
    case["request"]["body"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|op| op["value"].as_object())
        .collect()
}

/// Unleash's variants with the defaults we store filled in.
fn with_defaults(variants: &Value) -> Value {
    let mut variants = variants.clone();
    for variant in variants.as_array_mut().into_iter().flatten() {
        if let Some(object) = variant.as_object_mut() {
            object
                .entry("stickiness")
                .or_insert_with(|| Value::from("default"));
            object
                .entry("weightType")
                .or_insert_with(|| Value::from("variable"));
        }
    }
    variants
}

/// Every deliberate divergence.
pub const DIVERGENCES: &[Divergence] = &[
    Divergence {
        rule: "BEHAVIOUR.md §1: RFC 6902 strictly; an index past the end, a missing member or index, a non-numeric index is a 400 `Could not apply provided patch` (Unleash appends, ignores or adds)",
        examples: &["vp/add-index-out-of-range"],
        applies: |case, ours| {
            group(case) == "variants-patch"
                && unleash_status(case) == 200
                && ours.status == 400
                && ours.says("Could not apply provided patch")
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §1: a weight given as a string is an error, not a number (Unleash stores the string)",
        examples: &["vp/weight-string"],
        applies: |case, ours| {
            unleash_status(case) == 200
                && ours.status == 400
                && ours.says("weight must be an integer")
                && ours.says("not the string")
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §1: the project in the path is checked; a missing project, or a feature of another project, is a 404 (Unleash ignores the project and writes)",
        examples: &["vp/unknown-project"],
        applies: |case, ours| {
            unleash_status(case) == 200
                && ours.status == 404
                && (ours.says("no project") || ours.says("in project"))
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §1: defaults are stored, a variant without stickiness has stickiness \"default\" and one without weightType is variable (Unleash leaves stickiness out, drops such a variant)",
        examples: &[
            "vp/remove-field-stickiness",
            "vp/stickiness-missing",
            "vp/weighttype-missing-only",
        ],
        applies: |case, ours| {
            if group(case) != "variants-patch" || ours.status != 200 {
                return false;
            }
            let Some(body) = ours.body else {
                return false;
            };
            match unleash_status(case) {
                // The same variants once Unleash's get our defaults.
                200 => {
                    let theirs = &case["response"]["body"]["variants"];
                    *theirs != body["variants"] && with_defaults(theirs) == body["variants"]
                }
                // Unleash dropped a variant without weightType and found no variable one.
                400 => {
                    unleash_message(case).contains("at least one \"variable\" variant")
                        && patch_values(case)
                            .iter()
                            .any(|v| !v.contains_key("weightType"))
                }
                _ => false,
            }
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §Auth and permissions and §2: an admin key holds every permission and may import (Unleash refuses admin tokens)",
        examples: &[],
        applies: |case, ours| {
            unleash_status(case) == 400
                && unleash_message(case).contains("admin token")
                && ours.status == 200
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §2: everything is validated first and every problem, duplicate feature names and sub-list entries naming a feature not in data.features included, is listed in one 400 (Unleash: 409 or 404 mid-transaction)",
        examples: &[
            "import/duplicate-features-in-payload",
            "import/strategy-for-feature-not-in-features",
            "import/fenv-for-feature-not-in-features",
        ],
        applies: |case, ours| {
            group(case) == "features-batch-import"
                && matches!(unleash_status(case), 403 | 404 | 409)
                && ours.status == 400
                && (ours.says("duplicate feature")
                    || ours.says("is not one of the features in data.features"))
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: bad input that Unleash silently mangles (a number where a string belongs, coerced; an export tag not written type:value) gets a clear 400",
        examples: &["import/project-number", "app/create-bad-field-type"],
        applies: |case, ours| {
            let body = &case["request"]["body"];
            let number_given = |member: &str| body[member].is_number();
            group(case) != "project-access"
                && unleash_status(case) != 400
                && ours.status == 400
                && (ours.says("expected a string")
                    || ours.says("invalid type: integer")
                    || ours.says("is not written type:value")
                    || ["project", "environment"]
                        .iter()
                        .any(|m| number_given(m) && ours.says(&format!("{m} is required"))))
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §2: validate_import runs the same validation as import, so it reports what import would refuse, such as a missing project (Unleash reports nothing)",
        examples: &["validate/unknown-project"],
        applies: |case, ours| {
            group(case) == "features-batch-validate"
                && unleash_status(case) == 200
                && ours.status == 200
                && case["response"]["body"]["errors"] == serde_json::json!([])
                && ours
                    .body
                    .is_some_and(|b| b["errors"].as_array().is_some_and(|e| !e.is_empty()))
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §4: project access is served here (Unleash OSS answers 404: enterprise only), with the order of checks authentication → permission → body shape (400) → existence (404); GET reads it back, other methods are 405",
        examples: &[
            "access/put-default",
            "access/put-unknown-project",
            "access/get-default",
            "access/post-default-roles",
        ],
        applies: |case, ours| {
            group(case) == "project-access"
                && unleash_status(case) == 404
                && unleash_message(case).contains("is not available")
                && matches!(ours.status, 200 | 400 | 404 | 405)
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: bad input that Unleash answers with a 500 (deleting a built-in strategy) gets a clear 4xx naming it",
        examples: &["strategy/delete-builtin"],
        applies: |case, ours| {
            unleash_status(case) == 500 && (400..500).contains(&ours.status) && ours.body.is_some()
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: deleting for good a feature that is not archived is refused with a 400 saying so (Unleash answers 200 and deletes nothing)",
        examples: &["archive/delete-not-archived"],
        applies: |case, ours| {
            group(case) == "archive"
                && unleash_status(case) == 200
                && ours.status == 400
                && ours.says("is not archived")
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: a feature's lifecycle is derived from the feature and its events, `initial` from its creation and each stage from when it was entered (Unleash writes stages asynchronously, so a read right after a change lacks them)",
        examples: &["lifecycle/get"],
        applies: |case, ours| {
            let stages = |list: &Value| -> Vec<String> {
                list.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["stage"].as_str().map(str::to_owned))
                    .collect()
            };
            let (theirs, mine) = (stages(&case["response"]["body"]), ours.body.map(stages));
            group(case) == "lifecycle"
                && unleash_status(case) == 200
                && ours.status == 200
                && mine.is_some_and(|mine| {
                    mine.first().map(String::as_str) == Some("initial")
                        && theirs.iter().all(|stage| mine.contains(stage))
                })
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: feature links are served (Unleash 6.10.1's open-source build answers 404 to every link route)",
        examples: &["link/add"],
        applies: |case, ours| {
            path(case).contains("/link")
                && unleash_status(case) == 404
                && ours.status != 404
                && !(500..600).contains(&ours.status)
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: a project or feature named in the path that does not exist is a 404 (Unleash answers these reads and writes as if it did: an empty list, false, 200)",
        examples: &[],
        applies: |case, ours| {
            matches!(
                group(case),
                "dependencies" | "lifecycle" | "tags" | "variants"
            ) && (200..300).contains(&unleash_status(case))
                && ours.status == 404
                && (ours.says("There's no feature named") || ours.says("There's no project"))
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: a batch naming features or environments a project does not have changes nothing and names each in a 400, or a 404 when all are missing features (Unleash skips them and answers 200)",
        examples: &[],
        applies: |case, ours| {
            let batch = path(case).ends_with("/tags") || path(case).ends_with("/variants-batch");
            batch
                && case["request"]["method"] == "PUT"
                && (200..300).contains(&unleash_status(case))
                && matches!(ours.status, 400 | 404)
                && ours.body.is_some_and(|b| {
                    b["details"].as_array().into_iter().flatten().any(|d| {
                        d["path"].as_str().is_some_and(|p| {
                            p.starts_with("/features/") || p.starts_with("/environments/")
                        })
                    })
                })
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: whether a project has dependencies is answered for that project (Unleash answers whether any project has one)",
        examples: &[],
        applies: |case, ours| {
            let p = path(case);
            p.starts_with("/api/admin/projects/")
                && p.ends_with("/dependencies")
                && p.matches('/').count() == 5
                && unleash_status(case) == 200
                && ours.status == 200
                && ours.body.is_some_and(Value::is_boolean)
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: GET /api/admin/projects lists every project (Unleash OSS lists only `default`), and a project's health is computed when read (Unleash refreshes it with a periodic job, so it lags behind changes)",
        examples: &["projects/list"],
        applies: |case, ours| {
            let (theirs, mine) = lists(case, ours, "projects");
            is_get(case)
                && path(case).split('?').next() == Some("/api/admin/projects")
                && both_ok(case, ours)
                && !theirs.is_empty()
                && theirs.iter().all(|t| {
                    mine.iter().any(|o| {
                        o["id"] == t["id"]
                            && o["health"].as_u64().is_some_and(|h| h <= 100)
                            && agrees_except(t, o, &["health"])
                    })
                })
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: a key's secret is shown once, when the key is created, and never in a listing, which also shows the keys acting as users and the keys with grants (Unleash lists its API tokens, each with its secret)",
        examples: &["tokens/by-name"],
        applies: |case, ours| {
            let (theirs, mine) = lists(case, ours, "tokens");
            let ours_only = mine
                .iter()
                .filter(|k| k["type"] == "user" || k["type"] == "grants")
                .count();
            is_get(case)
                && path(case).starts_with("/api/admin/api-tokens")
                && both_ok(case, ours)
                && theirs.len() + ours_only == mine.len()
                && !mine.iter().any(shows_secret)
                && theirs
                    .iter()
                    .all(|t| mine.iter().any(|o| agrees_except(t, o, &["secret"])))
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: a project's key listing shows the client and frontend keys of that project, never their secrets (Unleash shows an admin token every key, admin keys and keys of every project included, each with its secret)",
        examples: &["projects/api-tokens"],
        applies: |case, ours| {
            let segments: Vec<&str> = path(case).split('/').collect();
            let [_, "api", "admin", "projects", project, "api-tokens"] = segments.as_slice() else {
                return false;
            };
            let (theirs, mine) = lists(case, ours, "tokens");
            let own: Vec<&Value> = theirs
                .iter()
                .filter(|t| {
                    t["type"] != "admin"
                        && t["projects"]
                            .as_array()
                            .is_some_and(|p| p.iter().any(|p| p == project))
                })
                .collect();
            is_get(case)
                && both_ok(case, ours)
                && own.len() == mine.len()
                && !mine.iter().any(shows_secret)
                && own
                    .iter()
                    .all(|t| mine.iter().any(|o| agrees_except(t, o, &["secret"])))
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: a user's profile lists no email subscription, as this service sends no email (Unleash subscribes every user to its productivity report)",
        examples: &["user/profile"],
        applies: |case, ours| {
            path(case) == "/api/admin/user/profile"
                && both_ok(case, ours)
                && ours.body.is_some_and(|body| {
                    body["subscriptions"] == serde_json::json!([])
                        && agrees_except(&case["response"]["body"], body, &["subscriptions"])
                })
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: the event search's events carry their `label` but no `summary` (Unleash's sentence for its UI, linking its own pages at its public URL, which this service does not know)",
        examples: &["events/search-get"],
        applies: |case, ours| {
            let (mut theirs, mine) = lists(case, ours, "events");
            for event in &mut theirs {
                if let Some(event) = event.as_object_mut() {
                    event.remove("summary");
                }
            }
            is_get(case)
                && path(case).starts_with("/api/admin/search/events")
                && both_ok(case, ours)
                && !mine.iter().any(|e| e.get("summary").is_some())
                && agrees_except(
                    &serde_json::json!({ "events": theirs }),
                    &serde_json::json!({ "events": mine }),
                    &[],
                )
        },
    },
    Divergence {
        rule: "BEHAVIOUR.md §rule of thumb: the event log holds the events of the changes made through this service, so nobody stands for schema migrations among its creators (Unleash's migrations write events as `migration`, id 0)",
        examples: &["events/creators"],
        applies: |case, ours| {
            let mut theirs = case["response"]["body"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            theirs.retain(|c| c["id"] != 0 || c["name"] != "migration");
            let mine = ours
                .body
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            path(case) == "/api/admin/event-creators"
                && both_ok(case, ours)
                && theirs.len() == mine.len()
                && agrees_except(&Value::Array(theirs), &Value::Array(mine), &[])
        },
    },
];
