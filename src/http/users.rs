//! Users, groups and custom roles over HTTP: who can hold a project role.

use axum::extract::State;
use serde::{Deserialize, Serialize};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{Group, NewGroup, NewRole, NewUser, Role, User};

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_users, create_user))
        .routes(routes!(read_user))
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
        (status = 201, description = "The user created.", body = crate::User),
        super::openapi::BodyErrors
    )
)]
async fn create_user(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(user): JsonBody<NewUser>,
) -> HttpResult<Json<User>> {
    Ok(Json::created(admin.create_user(&caller, &user).await?))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Users {
    #[schema(value_type = Vec<crate::User>)]
    users: Vec<User>,
}

#[utoipa::path(
    get,
    path = "/api/admin/user-admin",
    tag = "access",
    responses(
        (status = 200, description = "Every user.", body = Users),
        super::openapi::Errors
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

#[utoipa::path(
    get,
    path = "/api/admin/user-admin/{id}",
    tag = "access",
    params(super::openapi::IdPath),
    responses(
        (status = 200, description = "The user.", body = crate::User),
        super::openapi::Errors
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
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GroupBody {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    users: Vec<Member>,
    /// Unleash's SSO mapping and root role; accepted and ignored.
    #[serde(default)]
    #[allow(dead_code)]
    mappings_sso: Option<Vec<String>>,
    #[serde(default)]
    #[allow(dead_code)]
    root_role: Option<Option<i64>>,
}

/// A member of a group to create: `{"user": {"id": 1}}`, or the user id itself.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[schema(as = GroupMember)]
#[serde(untagged)]
enum Member {
    /// The user's id.
    Id(i64),
    /// `{"user": {"id": 1}}`, as Unleash takes it.
    User {
        /// The user.
        user: MemberUser,
    },
}

/// `{"id": 1}`: the user's id.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[schema(as = GroupMemberUser)]
struct MemberUser {
    /// The user's id.
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
    let group = NewGroup {
        name: body.name,
        description: body.description,
        users: body.users.iter().map(Member::id).collect(),
    };
    Ok(Json::created(admin.create_group(&caller, &group).await?))
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
