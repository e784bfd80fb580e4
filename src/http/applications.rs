//! Registered client applications: register, list, read, and delete (the third operation of
//! the specification); and the views over what their SDKs reported: an application's
//! overview, its instances in an environment, the applications of a project.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, LaterBody, Params, QueryParams};
use crate::ToggleAdmin;
use crate::error::Error;
use crate::model::{
    Application, ApplicationList, ApplicationOverview, EnvironmentInstances, ProjectApplications,
    Registration,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(read, register, remove))
        .routes(routes!(overview))
        .routes(routes!(environment_instances))
        .routes(routes!(project_applications))
}

/// How many applications of a project one page holds when `limit` is absent, and at most,
/// as in Unleash.
const PROJECT_APPLICATIONS_LIMIT: (usize, usize) = (50, 100);

#[utoipa::path(
    get,
    path = "/api/admin/metrics/applications/{appName}/overview",
    tag = "applications",
    params(super::openapi::AppPath),
    responses(
        (status = 200, description = "The application's projects, environments and issues.", body = ApplicationOverview),
        super::openapi::Errors
    )
)]
async fn overview(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<Json<ApplicationOverview>> {
    Ok(Json::ok(admin.application_overview(&caller, &name).await?))
}

/// `{appName}/environment/{environment}`.
#[derive(utoipa::IntoParams)]
#[into_params(names("appName", "environment"), parameter_in = Path)]
#[allow(dead_code)]
struct AppEnvironmentPath(String, String);

#[utoipa::path(
    get,
    path = "/api/admin/metrics/instances/{appName}/environment/{environment}",
    tag = "applications",
    params(AppEnvironmentPath),
    responses(
        (status = 200, description = "The application's instances there, seen in the last 24 hours.", body = EnvironmentInstances),
        super::openapi::Errors
    )
)]
async fn environment_instances(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((name, environment)): Params<(String, String)>,
) -> HttpResult<Json<EnvironmentInstances>> {
    Ok(Json::ok(EnvironmentInstances {
        instances: admin
            .environment_instances(&caller, &name, &environment)
            .await?,
    }))
}

/// `?query=&offset=&limit=&sortBy=&sortOrder=` of a project's applications (Unleash sends
/// numbers as strings).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProjectApplicationsQuery {
    /// Keep applications whose name, an environment, an instance or an SDK contains this.
    query: Option<String>,
    /// Skip this many.
    offset: Option<String>,
    /// The most to return: 50 when absent, at most 100.
    limit: Option<String>,
    /// Accepted and ignored: applications are sorted by name, as Unleash sorts them whatever
    /// this says.
    #[allow(dead_code)]
    sort_by: Option<String>,
    /// `asc` (the default) or `desc`.
    sort_order: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/applications",
    tag = "applications",
    params(super::openapi::ProjectPath, ProjectApplicationsQuery),
    responses(
        (status = 200, description = "The applications that used the project's features.", body = ProjectApplications),
        super::openapi::Errors
    )
)]
async fn project_applications(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    QueryParams(query): QueryParams<ProjectApplicationsQuery>,
) -> HttpResult<Json<ProjectApplications>> {
    let mut problems = Vec::new();
    let mut number = |name: &str, value: Option<&str>| {
        let value = value?;
        match value.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => {
                problems.push(crate::ErrorDetail::at(
                    format!("/{name}"),
                    format!("{name} must be a whole number, not \"{value}\""),
                ));
                None
            }
        }
    };
    let offset = number("offset", query.offset.as_deref()).unwrap_or(0);
    let (default_limit, max_limit) = PROJECT_APPLICATIONS_LIMIT;
    let limit = number("limit", query.limit.as_deref())
        .unwrap_or(default_limit)
        .min(max_limit);
    let descending = match query.sort_order.as_deref() {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(other) => {
            problems.push(crate::ErrorDetail::at(
                "/sortOrder",
                format!("sortOrder is asc or desc, not \"{other}\""),
            ));
            false
        }
    };
    if !problems.is_empty() {
        return Err(Error::validation("The query is not valid.", problems).into());
    }
    Ok(Json::ok(
        admin
            .project_applications(
                &caller,
                &project,
                query.query.as_deref(),
                descending,
                offset,
                limit,
            )
            .await?,
    ))
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
