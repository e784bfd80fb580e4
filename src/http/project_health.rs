//! How healthy a project's flags are, over HTTP:
//! `GET /api/admin/projects/{projectId}/health-report` (see
//! [`ToggleAdmin::project_health_report`]).

use axum::extract::State;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, Params};
use crate::ToggleAdmin;
use crate::model::ProjectHealthReport;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(health_report))
}

/// The project's health report (Unleash deprecates it; scripts read it to find stale flags):
/// its flags, how many are stale, potentially stale (older than their feature type's
/// lifetime) and active, and the health rating these make, computed now.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/health-report",
    tag = "projects",
    params(super::openapi::ProjectPath),
    responses(
        (status = 200, description = "The report (Unleash's `healthReportSchema`).", body = ProjectHealthReport),
        super::openapi::Errors
    )
)]
async fn health_report(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<ProjectHealthReport>> {
    Ok(Json::ok(
        admin.project_health_report(&caller, &project).await?,
    ))
}
