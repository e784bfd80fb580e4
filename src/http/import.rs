//! `/api/admin/features-batch/import` and `…/validate`: import (the second operation of the
//! specification) and its dry run.

use axum::extract::State;
use axum::http::StatusCode;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonValue};
use crate::ToggleAdmin;
use crate::model::ImportValidation;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(import))
        .routes(routes!(validate))
}

/// `POST /api/admin/features-batch/import`: 200 with no body. The body is handed over as raw
/// JSON so that every problem in it is reported with its path.
#[utoipa::path(
    post,
    path = "/api/admin/features-batch/import",
    tag = "import",
    request_body(content = crate::model::ImportBody, description = "The export to import, with its target.", content_type = "application/json"),
    responses(
        (status = 200, description = "Imported; no body."),
        super::openapi::BodyErrors
    )
)]
async fn import(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonValue(body): JsonValue,
) -> HttpResult<StatusCode> {
    let report = admin.import_toggles_json(&caller, &body).await?;
    tracing::info!(
        created = report.created.len(),
        updated = report.updated.len(),
        skipped_archived = report.skipped_archived.len(),
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
