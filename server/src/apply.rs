//! `toggle-admin apply FILE`: import FILE into the server, atomically (one import, under
//! `--mode`), and say what it did. Exit status 0, or 1 on any error.

use std::io::Write as _;

use clap::Args;
use toggle_admin::model::{ImportPlan, PlanAction};

use crate::plan::{self, Colour};
use crate::remote::{Connection, Document, Failure, Server, feature_count, thousands};

/// The flags of `toggle-admin apply`.
#[derive(Debug, Args)]
#[command(after_help = "\
Exit status: 0 when applied (an unchanged file writes nothing), 1 on any error (then nothing \
was written: the import is one transaction).
TOGGLE_ADMIN_URL and TOGGLE_ADMIN_KEY stand for --url and --key.")]
pub struct ApplyArgs {
    #[command(flatten)]
    document: Document,

    #[command(flatten)]
    connection: Connection,
}

/// Apply FILE and print what it did.
pub async fn run(args: ApplyArgs) -> Result<(), String> {
    let body = args.document.body().await?;
    let mode = args.document.mode();
    let server = Server::new(&args.connection)?;
    // The plan says what the import is about to do; a server without the plan route still
    // imports, it only cannot say what it changed.
    let planned = match plan::fetch(&server, &body, mode).await {
        Ok(plan) => Some(plan),
        Err(Failure::NoRoute) => None,
        Err(Failure::Other(message)) => return Err(message),
    };
    let count = feature_count(&body);
    eprintln!(
        "importing {} flag{}…",
        thousands(count),
        if count == 1 { "" } else { "s" }
    );
    server
        .post(
            &format!("/api/admin/features-batch/import?mode={mode}"),
            &body,
        )
        .await
        .map_err(|failure| match failure {
            Failure::NoRoute => format!(
                "the server at {} has no POST /api/admin/features-batch/import",
                server.base()
            ),
            Failure::Other(message) => message,
        })?;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(done(planned.as_ref(), Colour::for_stdout()).as_bytes());
    let _ = out.flush();
    Ok(())
}

/// What was applied: the plan's lines and a closing count in the past tense.
fn done(plan: Option<&ImportPlan>, colour: Colour) -> String {
    let Some(plan) = plan else {
        return "Applied (this server cannot say what changed).\n".to_owned();
    };
    if !plan.has_changes() {
        return format!(
            "Nothing to change: {} unchanged, {} skipped; nothing was written.\n",
            count(plan, PlanAction::Unchanged),
            count(plan, PlanAction::Skip)
        );
    }
    let mut text = plan::render(plan, colour);
    // The plan's own closing line, replaced by what was done.
    if let Some(last) = text.trim_end().rfind('\n') {
        text.truncate(last + 1);
    }
    text.push_str(&format!(
        "Applied: {} created, {} updated, {} unchanged, {} skipped.\n",
        count(plan, PlanAction::Create),
        count(plan, PlanAction::Update),
        count(plan, PlanAction::Unchanged),
        count(plan, PlanAction::Skip),
    ));
    text
}

fn count(plan: &ImportPlan, action: PlanAction) -> usize {
    plan.features.iter().filter(|f| f.action == action).count()
}
