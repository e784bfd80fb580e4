//! `/api/admin/features-batch/…`: import (the second operation of the specification), its dry
//! run, and export.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, JsonValue};
use crate::ToggleAdmin;
use crate::import::ImportValidation;
use crate::model::{ExportData, ExportQuery};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(import))
        .routes(routes!(validate))
        .routes(routes!(export))
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

/// `POST /api/admin/features-batch/export`: 200 with the `data` an import takes, for the
/// features the query selects (`tag`, a non-empty `features` list, `project`, else all;
/// names that do not exist are left out). With `downloadFile: true` the answer carries
/// `Content-Disposition: attachment`.
#[utoipa::path(
    post,
    path = "/api/admin/features-batch/export",
    tag = "import",
    request_body(content = ExportQuery, description = "What to export.", content_type = "application/json"),
    responses(
        (status = 200, description = "The data an import takes.", body = ExportData),
        super::openapi::BodyErrors
    )
)]
async fn export(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(query): JsonBody<ExportQuery>,
) -> HttpResult<Response> {
    let data = admin.export_query(&caller, &query).await?;
    let mut response = Json::ok(data).into_response();
    if query.download_file == Some(true) {
        let name = format!(
            "attachment; filename=\"export-{}.json\"",
            chrono::Utc::now().format("%Y-%m-%dT%H-%M-%S")
        );
        if let Ok(value) = HeaderValue::from_str(&name) {
            response
                .headers_mut()
                .insert(header::CONTENT_DISPOSITION, value);
        }
    }
    Ok(response)
}
