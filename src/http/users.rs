//! Users, groups and custom roles over HTTP: who can hold a project role.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, LaterBody, Params, QueryParams};
use crate::ToggleAdmin;
use crate::admin::Need;
use crate::model::{
    Group, GroupBody, NewRole, NewUser, Permission, Role, RoleSummary, RoleType,
    UserAccessOverview, UserUpdate, UserView,
};

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_users, create_user))
        .routes(routes!(search_users))
        .routes(routes!(read_user, update_user, delete_user))
        .routes(routes!(user_permissions))
        .routes(routes!(list_groups, create_group))
        .routes(routes!(read_group))
        .routes(routes!(list_roles, create_role))
        .routes(routes!(read_role))
}

#[utoipa::path(
    post,
    path = "/api/admin/user-admin",
    tag = "access",
    request_body(content = crate::model::NewUser, description = "The user to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The user created.", body = UserView),
        super::openapi::BodyErrors
    )
)]
async fn create_user(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(user): JsonBody<NewUser>,
) -> HttpResult<Json<UserView>> {
    Ok(Json::created(
        admin.create_user(&caller, &user).await?.into(),
    ))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Users {
    users: Vec<UserView>,
    /// The root roles a user may hold (Admin, Editor, Viewer), as Unleash lists them.
    root_roles: Vec<RoleSummary>,
}

#[utoipa::path(
    get,
    path = "/api/admin/user-admin",
    tag = "access",
    responses(
        (status = 200, description = "Every user, and the root roles.", body = Users),
        super::openapi::Errors
    )
)]
async fn list_users(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Users>> {
    let users = admin.users(&caller).await?;
    let root_roles = admin
        .roles(&caller)
        .await?
        .iter()
        .filter(|r| r.role_type == RoleType::Root)
        .map(RoleSummary::from)
        .collect();
    Ok(Json::ok(Users {
        users: users.into_iter().map(UserView::from).collect(),
        root_roles,
    }))
}

#[utoipa::path(
    get,
    path = "/api/admin/user-admin/{id}",
    tag = "access",
    params(super::openapi::IdPath),
    responses(
        (status = 200, description = "The user.", body = UserView),
        super::openapi::Errors
    )
)]
async fn read_user(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
) -> HttpResult<Json<UserView>> {
    Ok(Json::ok(admin.user(&caller, id).await?.into()))
}

#[utoipa::path(
    post,
    path = "/api/admin/groups",
    tag = "access",
    request_body(content = GroupBody, description = "The group to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The group created.", body = crate::Group),
        super::openapi::BodyErrors
    )
)]
async fn create_group(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(body): JsonBody<GroupBody>,
) -> HttpResult<Json<Group>> {
    Ok(Json::created(
        admin.create_group(&caller, &body.into_new_group()).await?,
    ))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Groups {
    #[schema(value_type = Vec<crate::Group>)]
    groups: Vec<Group>,
}

#[utoipa::path(
    get,
    path = "/api/admin/groups",
    tag = "access",
    responses(
        (status = 200, description = "Every group.", body = Groups),
        super::openapi::Errors
    )
)]
async fn list_groups(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Groups>> {
    Ok(Json::ok(Groups {
        groups: admin.groups(&caller).await?,
    }))
}

#[utoipa::path(
    get,
    path = "/api/admin/groups/{id}",
    tag = "access",
    params(super::openapi::IdPath),
    responses(
        (status = 200, description = "The group.", body = crate::Group),
        super::openapi::Errors
    )
)]
async fn read_group(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
) -> HttpResult<Json<Group>> {
    Ok(Json::ok(admin.group(&caller, id).await?))
}

/// `POST /api/admin/roles`: a custom project role `{name, description?, permissions: [{name,
/// environment?}]}`.
#[utoipa::path(
    post,
    path = "/api/admin/roles",
    tag = "access",
    request_body(content = crate::model::NewRole, description = "The custom project role to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The role created.", body = crate::Role),
        super::openapi::BodyErrors
    )
)]
async fn create_role(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(role): JsonBody<NewRole>,
) -> HttpResult<Json<Role>> {
    Ok(Json::created(admin.create_role(&caller, &role).await?))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Roles {
    #[schema(value_type = Vec<crate::Role>)]
    roles: Vec<Role>,
}

#[utoipa::path(
    get,
    path = "/api/admin/roles",
    tag = "access",
    responses(
        (status = 200, description = "Every role.", body = Roles),
        super::openapi::Errors
    )
)]
async fn list_roles(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Roles>> {
    Ok(Json::ok(Roles {
        roles: admin.roles(&caller).await?,
    }))
}

#[utoipa::path(
    get,
    path = "/api/admin/roles/{id}",
    tag = "access",
    params(super::openapi::IdPath),
    responses(
        (status = 200, description = "The role.", body = crate::Role),
        super::openapi::Errors
    )
)]
async fn read_role(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
) -> HttpResult<Json<Role>> {
    Ok(Json::ok(admin.role(&caller, id).await?))
}

/// `?q=`: what to search for.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct Search {
    /// At least two characters: a part of the name, or the start of the username or email.
    q: Option<String>,
}

/// Users whose name contains `q`, or whose username or email starts with it (Unleash's
/// answer: a bare array).
#[utoipa::path(
    get,
    path = "/api/admin/user-admin/search",
    tag = "access",
    params(Search),
    responses(
        (status = 200, description = "The users found, by id.", body = Vec<UserView>),
        super::openapi::Errors
    )
)]
async fn search_users(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    QueryParams(search): QueryParams<Search>,
) -> HttpResult<Json<Vec<UserView>>> {
    Ok(Json::ok(
        admin
            .search_users(&caller, search.q.as_deref().unwrap_or(""))
            .await?
            .into_iter()
            .map(UserView::from)
            .collect(),
    ))
}

/// Change a user's name, email or root role (`{name?, email?, rootRole?}`).
#[utoipa::path(
    put,
    path = "/api/admin/user-admin/{id}",
    tag = "access",
    params(super::openapi::IdPath),
    request_body(content = UserUpdate, description = "The fields to change.", content_type = "application/json"),
    responses(
        (status = 200, description = "The user as changed.", body = UserView),
        super::openapi::BodyErrors
    )
)]
async fn update_user(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
    body: LaterBody,
) -> HttpResult<Json<UserView>> {
    let permit = admin
        .permit(&caller, &[Need::root(Permission::ManageUsers)])
        .await?;
    let update: UserUpdate = body.object().await?;
    Ok(Json::ok(
        admin.update_user(permit, id, &update).await?.into(),
    ))
}

/// Delete a user: its keys are revoked, it leaves its groups and project roles.
#[utoipa::path(
    delete,
    path = "/api/admin/user-admin/{id}",
    tag = "access",
    params(super::openapi::IdPath),
    responses(
        (status = 200, description = "Deleted; no body."),
        super::openapi::Errors
    )
)]
async fn delete_user(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
) -> HttpResult<StatusCode> {
    admin.delete_user(&caller, id).await?;
    Ok(StatusCode::OK)
}

/// `?project=&environment=`: where to check project and environment permissions.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct AccessScope {
    /// The project to check project and environment permissions in.
    project: Option<String>,
    /// The environment to check environment permissions in.
    environment: Option<String>,
}

/// Every permission with whether the user holds it (Unleash's `userAccessOverviewSchema`).
#[utoipa::path(
    get,
    path = "/api/admin/user-admin/{id}/permissions",
    tag = "access",
    params(super::openapi::IdPath, AccessScope),
    responses(
        (status = 200, description = "The user's access, permission by permission.", body = UserAccessOverview),
        super::openapi::Errors
    )
)]
async fn user_permissions(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
    QueryParams(scope): QueryParams<AccessScope>,
) -> HttpResult<Json<UserAccessOverview>> {
    Ok(Json::ok(
        admin
            .user_access_overview(
                &caller,
                id,
                scope.project.as_deref(),
                scope.environment.as_deref(),
            )
            .await?,
    ))
}
