//! Registered client applications: register, list, read, and delete (the third operation of
//! the specification).

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, LaterBody, Params, QueryParams};
use crate::ToggleAdmin;
use crate::error::Error;
use crate::model::{Application, ApplicationList, Registration};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(read, register, remove))
}

/// `DELETE /api/admin/metrics/applications/{appName}`: 200 with no body, whether or not the
/// application existed.
#[utoipa::path(
    delete,
    path = "/api/admin/metrics/applications/{appName}",
    tag = "applications",
    params(super::openapi::AppPath),
    responses(
        (status = 200, description = "Deleted (also when there was none); no body."),
        super::openapi::Errors
    )
)]
async fn remove(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<StatusCode> {
    admin.delete_application(&caller, &name).await?;
    Ok(StatusCode::OK)
}

/// Register or update an application: 202 with no body, as Unleash.
#[utoipa::path(
    post,
    path = "/api/admin/metrics/applications/{appName}",
    tag = "applications",
    params(super::openapi::AppPath),
    request_body(content = Registration, description = "The application to register or update.", content_type = "application/json"),
    responses(
        (status = 202, description = "Registered; no body."),
        super::openapi::BodyErrors
    )
)]
async fn register(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    let permit = admin.permit_application_change(&caller).await?;
    let body: Registration = body.object().await?;
    if let Some(app_name) = &body.app_name
        && *app_name != name
    {
        return Err(Error::invalid_at(
            "/appName",
            format!("appName \"{app_name}\" differs from the application in the path, \"{name}\""),
        )
        .into());
    }
    admin
        .register_application(permit, &body.into_application(name))
        .await?;
    Ok(StatusCode::ACCEPTED)
}

#[utoipa::path(
    get,
    path = "/api/admin/metrics/applications/{appName}",
    tag = "applications",
    params(super::openapi::AppPath),
    responses(
        (status = 200, description = "The application.", body = Application),
        super::openapi::Errors
    )
)]
async fn read(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<Json<Application>> {
    Ok(Json::ok(admin.application(&caller, &name).await?))
}

/// The query of `GET /api/admin/metrics/applications`.
#[derive(Debug, Deserialize)]
struct ListQuery {
    /// Only applications whose name contains this (case-insensitive).
    #[serde(default)]
    query: Option<String>,
}

/// `GET /api/admin/metrics/applications`: 200 `{total, applications}` (Unleash's
/// `applicationsSchema`), by name; `?query=` keeps those whose name contains it.
#[utoipa::path(
    get,
    path = "/api/admin/metrics/applications",
    tag = "applications",
    params(("query" = Option<String>, Query, description = "Only applications whose name contains this.")),
    responses(
        (status = 200, description = "The registered applications.", body = ApplicationList),
        super::openapi::Errors
    )
)]
async fn list(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    QueryParams(query): QueryParams<ListQuery>,
) -> HttpResult<Json<ApplicationList>> {
    let mut applications = admin.applications(&caller).await?;
    if let Some(wanted) = query.query.map(|q| q.to_lowercase()) {
        applications.retain(|a| a.name.to_lowercase().contains(&wanted));
    }
    Ok(Json::ok(ApplicationList {
        total: applications.len(),
        applications,
    }))
}
