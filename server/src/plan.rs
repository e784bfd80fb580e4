//! `toggle-admin plan FILE`: what applying FILE would change on the server, one line per
//! change, and Terraform's detailed exit code: 0 nothing would change, 2 something would,
//! 1 an error (and nothing else ever means 2).

use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};

use clap::Args;
use serde_json::Value;
use toggle_admin::model::{FeaturePlan, ImportPlan, PlanAction, PlanChange, SkipReason};

use crate::remote::{Connection, Document, Failure, Server};

/// The flags of `toggle-admin plan`.
#[derive(Debug, Args)]
#[command(after_help = "\
Exit status: 0 when nothing would change, 2 when something would (a feature created or \
updated, a context field or tag type created), 1 on any error.
TOGGLE_ADMIN_URL and TOGGLE_ADMIN_KEY stand for --url and --key. Colour only on a terminal, \
never with NO_COLOR set.")]
pub struct PlanArgs {
    #[command(flatten)]
    document: Document,

    #[command(flatten)]
    connection: Connection,
}

/// What a plan found, for the exit status.
pub enum Planned {
    NoChanges,
    Changes,
}

/// Print the plan; whether it has changes.
pub async fn run(args: PlanArgs) -> Result<Planned, String> {
    let body = args.document.body().await?;
    let server = Server::new(&args.connection)?;
    let plan =
        fetch(&server, &body, args.document.mode())
            .await
            .map_err(|failure| match failure {
                Failure::NoRoute => no_plan_route(server.base()),
                Failure::Other(message) => message,
            })?;
    let colour = Colour::for_stdout();
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(render(&plan, colour).as_bytes());
    let _ = out.flush();
    Ok(if plan.has_changes() {
        Planned::Changes
    } else {
        Planned::NoChanges
    })
}

/// The plan of `body` under `mode`, from the server.
pub async fn fetch(
    server: &Server,
    body: &Value,
    mode: toggle_admin::model::ImportMode,
) -> Result<ImportPlan, Failure> {
    let path = format!("/api/admin/features-batch/plan?mode={mode}");
    server.post_json(&path, body).await
}

/// The message for a server without the plan route.
fn no_plan_route(base: &str) -> String {
    format!(
        "the server at {base} cannot plan: it has no POST /api/admin/features-batch/plan (404 \
         or 405). It is an older toggle-admin, or Unleash itself; plan against a toggle-admin \
         server that has it"
    )
}

/// Whether to colour: on a terminal, and `NO_COLOR` unset or empty (no-color.org).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colour(bool);

impl Colour {
    pub fn for_stdout() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Colour(!no_color && std::io::stdout().is_terminal())
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

const GREEN: &str = "32";
const YELLOW: &str = "33";
const RED: &str = "31";
const DIM: &str = "2";

/// The plan as lines: a heading, a line per change, the unchanged and skipped features
/// summarised, the warnings, and a closing count.
pub fn render(plan: &ImportPlan, colour: Colour) -> String {
    let mut out = format!(
        "plan for project {}, environment {} (mode {}):\n",
        plan.project, plan.environment, plan.mode
    );
    for field in &plan.context_fields {
        let _ = writeln!(
            out,
            "{}",
            colour.paint(GREEN, &format!("+ create context field {}", field.name))
        );
    }
    for tag_type in &plan.tag_types {
        let _ = writeln!(
            out,
            "{}",
            colour.paint(GREEN, &format!("+ create tag type {}", tag_type.name))
        );
    }
    let mut unchanged = Vec::new();
    let mut skipped = Vec::new();
    for feature in &plan.features {
        match feature.action {
            PlanAction::Create => {
                let _ = writeln!(
                    out,
                    "{}",
                    colour.paint(GREEN, &format!("+ create {}", feature.name))
                );
            }
            PlanAction::Update => {
                for change in &feature.changes {
                    let _ = writeln!(out, "{}", update_line(feature, change, colour));
                }
            }
            PlanAction::Unchanged => unchanged.push(feature.name.as_str()),
            PlanAction::Skip => skipped.push(feature),
        }
    }
    for feature in &skipped {
        let reason = match feature.reason {
            Some(SkipReason::Archived) => "archived on the server; revive it to import it",
            Some(SkipReason::Exists) => "exists; create-missing leaves it as it is",
            _ => "not touched",
        };
        let _ = writeln!(
            out,
            "{}",
            colour.paint(DIM, &format!("- skip {} ({reason})", feature.name))
        );
    }
    if !unchanged.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            colour.paint(
                DIM,
                &format!(
                    "= {} unchanged: {}",
                    unchanged.len(),
                    abbreviated(&unchanged, 10)
                )
            )
        );
    }
    for warning in &plan.warnings {
        match &warning.path {
            Some(path) => writeln!(out, "warning: {path}: {}", warning.message),
            None => writeln!(out, "warning: {}", warning.message),
        }
        .ok();
    }
    let count = |action| plan.features.iter().filter(|f| f.action == action).count();
    let _ = writeln!(
        out,
        "{}: {} to create, {} to update, {} unchanged, {} skipped{}.",
        if plan.has_changes() {
            "Changes"
        } else {
            "No changes"
        },
        count(PlanAction::Create),
        count(PlanAction::Update),
        count(PlanAction::Unchanged),
        count(PlanAction::Skip),
        catalogue(plan),
    );
    out
}

/// `~ update NAME: PATH FROM → TO`, a side that does not exist shown as `(none)`.
fn update_line(feature: &FeaturePlan, change: &PlanChange, colour: Colour) -> String {
    let side = |value: &Option<Value>| {
        value
            .as_ref()
            .map_or_else(|| "(none)".to_owned(), Value::to_string)
    };
    let code = match (&change.from, &change.to) {
        (None, Some(_)) => GREEN,
        (Some(_), None) => RED,
        _ => YELLOW,
    };
    colour.paint(
        code,
        &format!(
            "~ update {}: {} {} → {}",
            feature.name,
            change.path,
            side(&change.from),
            side(&change.to)
        ),
    )
}

/// `, and N context fields, M tag types to create` when there are any.
fn catalogue(plan: &ImportPlan) -> String {
    match (plan.context_fields.len(), plan.tag_types.len()) {
        (0, 0) => String::new(),
        (fields, types) => {
            format!(", and {fields} context field(s), {types} tag type(s) to create")
        }
    }
}

/// The first `at_most` names, and how many more.
fn abbreviated(names: &[&str], at_most: usize) -> String {
    let shown = names
        .iter()
        .take(at_most)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    match names.len().saturating_sub(at_most) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan() -> ImportPlan {
        serde_json::from_value(json!({
            "project": "shop", "environment": "production", "mode": "replace",
            "features": [
                {"name": "checkout", "action": "update", "changes": [
                    {"path": "/strategies/0/parameters/rollout", "from": "25", "to": "50"},
                    {"path": "/strategies/0/constraints/1", "from": {"contextName": "appName"}},
                ]},
                {"name": "search", "action": "create", "changes": [{"path": "/enabled", "to": false}]},
                {"name": "banner", "action": "unchanged", "changes": []},
                {"name": "legacy", "action": "skip", "reason": "archived", "changes": []},
            ],
            "contextFields": [], "tagTypes": [], "warnings": []
        }))
        .unwrap()
    }

    #[test]
    fn one_line_per_change_with_old_and_new_values() {
        let text = render(&plan(), Colour(false));
        assert!(
            text.contains("~ update checkout: /strategies/0/parameters/rollout \"25\" → \"50\"\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "~ update checkout: /strategies/0/constraints/1 {\"contextName\":\"appName\"} → (none)\n"
            ),
            "{text}"
        );
        assert!(text.contains("+ create search\n"), "{text}");
        assert!(text.contains("= 1 unchanged: banner\n"), "{text}");
        assert!(text.contains("- skip legacy (archived"), "{text}");
        assert!(
            text.contains("Changes: 1 to create, 1 to update, 1 unchanged, 1 skipped."),
            "{text}"
        );
        assert!(!text.contains('\x1b'), "{text}");
    }

    #[test]
    fn colour_only_when_asked() {
        assert!(render(&plan(), Colour(true)).contains("\x1b[32m+ create search\x1b[0m"));
    }
}
