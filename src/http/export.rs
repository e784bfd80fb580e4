//! `/api/admin/features-batch/export`: export, in exactly the shape an import takes.

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody};
use crate::ToggleAdmin;
use crate::model::{ExportData, ExportQuery};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(export))
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
