//! `/api/admin/features-batch/import`, `…/validate` and `…/plan`: import (the second
//! operation of the specification), its dry run, and the plan of what it would change.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonValue, QueryParams};
use crate::ToggleAdmin;
use crate::error::Result;
use crate::model::ImportValidation;
use crate::model::{ImportMode, ImportPlan};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(import))
        .routes(routes!(validate))
        .routes(routes!(plan))
}

/// `?mode=` of the import and the plan.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ModeQuery {
    /// `replace` (the default: Unleash's behaviour) or `create-missing` (only features the
    /// store lacks are created; existing ones are left as they are). Anything else is a 400
    /// naming `mode`.
    #[param(value_type = Option<ImportMode>)]
    mode: Option<String>,
}

impl ModeQuery {
    fn mode(&self) -> Result<ImportMode> {
        self.mode
            .as_deref()
            .map_or(Ok(ImportMode::default()), str::parse)
    }
}

/// `POST /api/admin/features-batch/import`: 200 with no body. The body is handed over as raw
/// JSON so that every problem in it is reported with its path.
#[utoipa::path(
    post,
    path = "/api/admin/features-batch/import",
    tag = "import",
    params(ModeQuery),
    request_body(content = crate::model::ImportBody, description = "The export to import, with its target.", content_type = "application/json"),
    responses(
        (status = 200, description = "Imported (or nothing to change: then nothing is written, no event); no body."),
        super::openapi::BodyErrors
    )
)]
async fn import(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    QueryParams(query): QueryParams<ModeQuery>,
    JsonValue(body): JsonValue,
) -> HttpResult<StatusCode> {
    let mode = query.mode()?;
    let report = admin.import_toggles_json_with(&caller, &body, mode).await?;
    tracing::info!(
        %mode,
        created = report.created.len(),
        updated = report.updated.len(),
        unchanged = report.unchanged.len(),
        skipped_archived = report.skipped_archived.len(),
        skipped_existing = report.skipped_existing.len(),
        warnings = report.warnings.len(),
        "import"
    );
    Ok(StatusCode::OK)
}

/// `POST /api/admin/features-batch/validate`: the dry run, 200
/// `{errors, warnings, permissions}`, each a list of `{message, affectedItems}`; nothing is
/// written.
#[utoipa::path(
    post,
    path = "/api/admin/features-batch/validate",
    tag = "import",
    request_body(content = crate::model::ImportBody, description = "The export to check, with its target.", content_type = "application/json"),
    responses(
        (status = 200, description = "What the import would report; nothing written.", body = crate::ImportValidation),
        super::openapi::BodyErrors
    )
)]
async fn validate(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonValue(body): JsonValue,
) -> HttpResult<Json<ImportValidation>> {
    Ok(Json::ok(admin.validate_import_json(&caller, &body).await?))
}

/// `POST /api/admin/features-batch/plan`: what the import of the same body under the same
/// `?mode=` would do, 200 with the plan; nothing is written (no event, no revision). A bad
/// body is the import's 400, naming every problem.
#[utoipa::path(
    post,
    path = "/api/admin/features-batch/plan",
    tag = "import",
    params(ModeQuery),
    request_body(content = crate::model::ImportBody, description = "The export to plan, with its target.", content_type = "application/json"),
    responses(
        (status = 200, description = "What the import would create, update, leave unchanged and skip, with the old and new values; nothing written.", body = ImportPlan),
        super::openapi::BodyErrors
    )
)]
async fn plan(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    QueryParams(query): QueryParams<ModeQuery>,
    JsonValue(body): JsonValue,
) -> HttpResult<Json<ImportPlan>> {
    let mode = query.mode()?;
    Ok(Json::ok(
        admin.plan_import_json(&caller, &body, mode).await?,
    ))
}
