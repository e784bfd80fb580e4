//! `/api/admin/features-batch/…`: import (the second operation of the specification), its dry
//! run, and export.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use serde::Deserialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, JsonValue};
use crate::ToggleAdmin;
use crate::error::Error;
use crate::import::ImportValidation;
use crate::model::ExportData;

pub(crate) fn routes() -> super::Routes {
    super::Routes::new()
        .route("/api/admin/features-batch/import", post(import))
        .route("/api/admin/features-batch/validate", post(validate))
        .route("/api/admin/features-batch/export", post(export))
}

/// `POST /api/admin/features-batch/import`: 200 with no body. The body is handed over as raw
/// JSON so that every problem in it is reported with its path.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    post,
    path = "/api/admin/features-batch/import",
    tag = "import",
    request_body(content = crate::model::ImportBody, description = "The export to import, with its target.", content_type = "application/json"),
    responses(
        (status = 200, description = "Imported; no body."),
        crate::http::openapi::BodyErrors
    )
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
/// `{errors, warnings, missingPermissions}`; nothing is written.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    post,
    path = "/api/admin/features-batch/validate",
    tag = "import",
    request_body(content = crate::model::ImportBody, description = "The export to check, with its target.", content_type = "application/json"),
    responses(
        (status = 200, description = "What the import would report; nothing written.", body = crate::http::openapi::ImportValidationSchema),
        crate::http::openapi::BodyErrors
    )
    )
)]
async fn validate(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonValue(body): JsonValue,
) -> HttpResult<Json<ImportValidation>> {
    Ok(Json::ok(admin.validate_import_json(&caller, &body).await?))
}

/// The body of `POST /api/admin/features-batch/export` (Unleash's `exportQuerySchema`).
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExportQuery {
    environment: String,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    features: Vec<String>,
    /// Accepted for compatibility: the document is the response body either way.
    #[serde(default)]
    #[allow(dead_code)]
    download_file: Option<bool>,
}

/// `POST /api/admin/features-batch/export`: 200 with the `data` an import takes. Without
/// `project`, the project is the one the named features live in (they must share one).
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    post,
    path = "/api/admin/features-batch/export",
    tag = "import",
    request_body(content = ExportQuery, description = "What to export.", content_type = "application/json"),
    responses(
        (status = 200, description = "The data an import takes.", body = ExportData),
        crate::http::openapi::BodyErrors
    )
    )
)]
async fn export(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(query): JsonBody<ExportQuery>,
) -> HttpResult<Json<ExportData>> {
    let project = match query.project {
        Some(project) => project,
        None => {
            let Some(first) = query.features.first() else {
                return Err(Error::invalid_at(
                    "/project",
                    "name a project, or the features to export",
                )
                .into());
            };
            let project = admin.feature_project(&caller, first).await?;
            for name in &query.features[1..] {
                if admin.feature_project(&caller, name).await? != project {
                    return Err(Error::invalid_at(
                        "/features",
                        "the features to export live in different projects: export one project at a time",
                    )
                    .into());
                }
            }
            project
        }
    };
    Ok(Json::ok(
        admin
            .export(&caller, &project, &query.environment, &query.features)
            .await?,
    ))
}
