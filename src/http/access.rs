//! Project access (the fourth operation of the specification) and the users, groups and
//! custom roles it assigns.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use serde::{Deserialize, Serialize};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, LaterBody, Params};
use crate::ToggleAdmin;
use crate::access::{Group, Role, User};
use crate::admin::{NewGroup, NewRole, NewUser};
use crate::model::ProjectAccessConfiguration;

pub(crate) fn routes() -> super::Routes {
    super::Routes::new()
        .route(
            "/api/admin/projects/{projectId}/access",
            get(read_access).put(set_access),
        )
        .route("/api/admin/user-admin", get(list_users).post(create_user))
        .route("/api/admin/user-admin/{id}", get(read_user))
        .route("/api/admin/groups", get(list_groups).post(create_group))
        .route("/api/admin/groups/{id}", get(read_group))
        .route("/api/admin/roles", get(list_roles).post(create_role))
        .route("/api/admin/roles/{id}", get(read_role))
}

/// `PUT /api/admin/projects/{projectId}/access`: replace the project's whole assignment of
/// users and groups to roles. 200 with no body.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/access",
    tag = "access",
    params(crate::http::openapi::ProjectPath),
    request_body(content = ProjectAccessConfiguration, description = "The project's whole new assignment.", content_type = "application/json"),
    responses(
        (status = 200, description = "Replaced; no body."),
        crate::http::openapi::BodyErrors
    )
    )
)]
async fn set_access(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    admin
        .require_some_access_permission(&caller, &project)
        .await?;
    let config: ProjectAccessConfiguration = body.object().await?;
    admin.set_project_access(&caller, &project, &config).await?;
    Ok(StatusCode::OK)
}

/// The project's assignment, in the shape `PUT` takes.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/access",
    tag = "access",
    params(crate::http::openapi::ProjectPath),
    responses(
        (status = 200, description = "The project's assignment of users and groups to roles.", body = ProjectAccessConfiguration),
        crate::http::openapi::Errors
    )
    )
)]
async fn read_access(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<ProjectAccessConfiguration>> {
    Ok(Json::ok(admin.project_access(&caller, &project).await?))
}

#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    post,
    path = "/api/admin/user-admin",
    tag = "access",
    request_body(content = crate::http::openapi::NewUserSchema, description = "The user to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The user created.", body = crate::http::openapi::UserSchema),
        crate::http::openapi::BodyErrors
    )
    )
)]
async fn create_user(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(user): JsonBody<NewUser>,
) -> HttpResult<Json<User>> {
    Ok(Json::created(admin.create_user(&caller, &user).await?))
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
struct Users {
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::http::openapi::UserSchema>))]
    users: Vec<User>,
}

#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    get,
    path = "/api/admin/user-admin",
    tag = "access",
    responses(
        (status = 200, description = "Every user.", body = Users),
        crate::http::openapi::Errors
    )
    )
)]
async fn list_users(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Users>> {
    Ok(Json::ok(Users {
        users: admin.users(&caller).await?,
    }))
}

#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    get,
    path = "/api/admin/user-admin/{id}",
    tag = "access",
    params(crate::http::openapi::IdPath),
    responses(
        (status = 200, description = "The user.", body = crate::http::openapi::UserSchema),
        crate::http::openapi::Errors
    )
    )
)]
async fn read_user(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
) -> HttpResult<Json<User>> {
    Ok(Json::ok(admin.user(&caller, id).await?))
}

/// The body of `POST /api/admin/groups`, as Unleash takes it: members as
/// `[{"user": {"id": 1}}]` (plain ids `[1]` are accepted too).
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GroupBody {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::http::openapi::GroupMemberSchema>))]
    users: Vec<Member>,
    /// Unleash's SSO mapping and root role; accepted and ignored.
    #[serde(default)]
    #[allow(dead_code)]
    mappings_sso: Option<Vec<String>>,
    #[serde(default)]
    #[allow(dead_code)]
    root_role: Option<Option<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Member {
    Id(i64),
    User { user: MemberUser },
}

#[derive(Debug, Deserialize)]
struct MemberUser {
    id: i64,
}

impl Member {
    fn id(&self) -> i64 {
        match self {
            Member::Id(id) => *id,
            Member::User { user } => user.id,
        }
    }
}

#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    post,
    path = "/api/admin/groups",
    tag = "access",
    request_body(content = GroupBody, description = "The group to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The group created.", body = crate::http::openapi::GroupSchema),
        crate::http::openapi::BodyErrors
    )
    )
)]
async fn create_group(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(body): JsonBody<GroupBody>,
) -> HttpResult<Json<Group>> {
    let group = NewGroup {
        name: body.name,
        description: body.description,
        users: body.users.iter().map(Member::id).collect(),
    };
    Ok(Json::created(admin.create_group(&caller, &group).await?))
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
struct Groups {
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::http::openapi::GroupSchema>))]
    groups: Vec<Group>,
}

#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    get,
    path = "/api/admin/groups",
    tag = "access",
    responses(
        (status = 200, description = "Every group.", body = Groups),
        crate::http::openapi::Errors
    )
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

#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    get,
    path = "/api/admin/groups/{id}",
    tag = "access",
    params(crate::http::openapi::IdPath),
    responses(
        (status = 200, description = "The group.", body = crate::http::openapi::GroupSchema),
        crate::http::openapi::Errors
    )
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
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    post,
    path = "/api/admin/roles",
    tag = "access",
    request_body(content = crate::http::openapi::NewRoleSchema, description = "The custom project role to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The role created.", body = crate::http::openapi::RoleSchema),
        crate::http::openapi::BodyErrors
    )
    )
)]
async fn create_role(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(role): JsonBody<NewRole>,
) -> HttpResult<Json<Role>> {
    Ok(Json::created(admin.create_role(&caller, &role).await?))
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
struct Roles {
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::http::openapi::RoleSchema>))]
    roles: Vec<Role>,
}

#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    get,
    path = "/api/admin/roles",
    tag = "access",
    responses(
        (status = 200, description = "Every role.", body = Roles),
        crate::http::openapi::Errors
    )
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

#[cfg_attr(
    feature = "openapi",
    utoipa::path(
    get,
    path = "/api/admin/roles/{id}",
    tag = "access",
    params(crate::http::openapi::IdPath),
    responses(
        (status = 200, description = "The role.", body = crate::http::openapi::RoleSchema),
        crate::http::openapi::Errors
    )
    )
)]
async fn read_role(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
) -> HttpResult<Json<Role>> {
    Ok(Json::ok(admin.role(&caller, id).await?))
}
