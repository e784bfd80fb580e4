//! The OpenAPI 3.1 document of the admin API (feature `openapi`): [`openapi`], served at
//! `GET /api/admin/openapi.json`.
//!
//! The schemas are derived from the wire types the handlers use, the operations from the
//! handlers' `utoipa::path` annotations. The few wire types that live outside `model` and
//! `error` (users, groups, roles, events, the import dry run, API keys) are described by
//! mirrors below, named as the types they describe.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::{IntoParams, IntoResponses, Modify, OpenApi, ToSchema};

use crate::error::{ErrorBody, ErrorDetail};

/// The path of the document.
pub(crate) const DOCUMENT_PATH: &str = "/api/admin/openapi.json";

/// The name of the security scheme: the API key in the `Authorization` header.
pub(crate) const SECURITY_SCHEME: &str = "apiKey";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "toggle-admin",
        description = "The admin API of a feature-toggle service, wire-compatible with Unleash's admin API. Every operation but this document's needs the API key in the `Authorization` header (`Authorization: <key>`; a `Bearer ` prefix is also accepted). Every error body is `{id, name, message, details?}`."
    ),
    paths(
        document,
        super::variants::read,
        super::variants::patch,
        super::variants::replace,
        super::projects::create_project,
        super::projects::read_project,
        super::projects::list_environments,
        super::projects::create_environment,
        super::projects::add_project_environment,
        super::projects::create_feature,
        super::projects::read_feature,
        super::projects::archive_feature,
        super::projects::archived_features,
        super::keys::list,
        super::keys::create_admin_key,
        super::keys::revoke,
        super::keys::create_user_key,
        super::keys::revoke_user_key,
        super::events::list,
        super::access::read_access,
        super::access::set_access,
        super::access::list_users,
        super::access::create_user,
        super::access::read_user,
        super::access::list_groups,
        super::access::create_group,
        super::access::read_group,
        super::access::list_roles,
        super::access::create_role,
        super::access::read_role,
        super::applications::list,
        super::applications::read,
        super::applications::register,
        super::applications::remove,
        super::import::import,
        super::import::validate,
        super::import::export,
        super::catalog::list_tag_types,
        super::catalog::create_tag_type,
        super::catalog::read_tag_type,
        super::catalog::list_context,
        super::catalog::create_context,
        super::catalog::read_context,
        super::catalog::list_segments,
        super::catalog::create_segment,
        super::catalog::read_segment,
        super::catalog::list_strategies,
        super::catalog::create_strategy,
        super::catalog::read_strategy,
        super::feature_config::list_strategies,
        super::feature_config::add_strategy,
        super::feature_config::update_strategy,
        super::feature_config::remove_strategy,
        super::feature_config::enable,
        super::feature_config::disable,
        super::feature_config::list_dependencies,
        super::feature_config::add_dependency,
        super::feature_config::remove_dependency,
        super::feature_config::list_tags,
        super::feature_config::add_tag,
        super::feature_config::remove_tag,
    ),
    components(schemas(ErrorBody, ErrorDetail)),
    modifiers(&SecurityAddon),
    security(("apiKey" = []))
)]
struct ApiDoc;

/// Adds the API-key security scheme.
struct SecurityAddon;

impl Modify for SecurityAddon {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            SECURITY_SCHEME,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "Authorization",
                "The API key, as is (`Authorization: <key>`); a `Bearer ` prefix is also accepted.",
            ))),
        );
    }
}

/// The OpenAPI 3.1 document of the admin API: every route of [`router`](super::router), its
/// request body, every response status with its body, and the `Authorization` API-key
/// security scheme. Embedders may merge it into their own document.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// The route that serves the document, without authentication.
pub(crate) fn routes() -> super::Routes {
    super::Routes::new().route(DOCUMENT_PATH, get(document))
}

/// The OpenAPI document of this API. No key needed.
#[utoipa::path(
    get,
    path = "/api/admin/openapi.json",
    tag = "meta",
    security(()),
    responses(
        (status = 200, description = "The OpenAPI 3.1 document of this API.", content_type = "application/json", body = Object),
    )
)]
async fn document() -> Response {
    match openapi().to_json() {
        Ok(json) => (
            StatusCode::OK,
            [(
                axum::http::header::CONTENT_TYPE,
                "application/json; charset=utf-8",
            )],
            json,
        )
            .into_response(),
        Err(source) => super::error::error_response(&crate::error::Error::internal(
            "could not encode the OpenAPI document",
            Some(Box::new(source)),
        )),
    }
}

fn error_response(description: &str) -> RefOr<utoipa::openapi::Response> {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
        .into()
}

fn common_errors() -> BTreeMap<String, RefOr<utoipa::openapi::Response>> {
    [
        (
            "400",
            "ValidationError: a path or query parameter does not parse, or the input is not valid.",
        ),
        (
            "401",
            "AuthenticationRequired: the API key is missing, unknown or revoked.",
        ),
        (
            "403",
            "NoAccessError: the key lacks a permission the operation needs.",
        ),
        (
            "404",
            "NotFoundError: the project, feature, environment … does not exist.",
        ),
        (
            "409",
            "NameExistsError (a name is taken) or ConflictError (concurrent writers; try again).",
        ),
        (
            "500",
            "InternalError: the store failed. The body says only that; the cause is logged.",
        ),
    ]
    .into_iter()
    .map(|(status, description)| (status.to_owned(), error_response(description)))
    .collect()
}

/// The error responses of an operation without a request body.
pub(crate) struct Errors;

impl IntoResponses for Errors {
    fn responses() -> BTreeMap<String, RefOr<utoipa::openapi::Response>> {
        common_errors()
    }
}

/// The error responses of an operation with a JSON request body: those of [`Errors`], 413 and
/// 415.
pub(crate) struct BodyErrors;

impl IntoResponses for BodyErrors {
    fn responses() -> BTreeMap<String, RefOr<utoipa::openapi::Response>> {
        let mut responses = common_errors();
        responses.insert(
            "413".to_owned(),
            error_response("PayloadTooLarge: the body is over the configured limit."),
        );
        responses.insert(
            "415".to_owned(),
            error_response("ContentTypeError: the body is not `application/json`."),
        );
        responses
    }
}

// Path parameters, by route.

/// `{projectId}`.
#[derive(IntoParams)]
#[into_params(names("projectId"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct ProjectPath(String);

/// `{projectId}/…/{featureName}`.
#[derive(IntoParams)]
#[into_params(names("projectId", "featureName"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct FeaturePath(String, String);

/// `{projectId}/…/{featureName}/…/{environment}`.
#[derive(IntoParams)]
#[into_params(names("projectId", "featureName", "environment"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct FeatureEnvPath(String, String, String);

/// `…/{environment}/strategies/{strategyId}`.
#[derive(IntoParams)]
#[into_params(
    names("projectId", "featureName", "environment", "strategyId"),
    parameter_in = Path
)]
#[allow(dead_code)]
pub(crate) struct StrategyPath(String, String, String, String);

/// `…/dependencies/{parent}`.
#[derive(IntoParams)]
#[into_params(names("projectId", "featureName", "parent"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct DependencyPath(String, String, String);

/// `/api/admin/features/{featureName}/…`.
#[derive(IntoParams)]
#[into_params(names("featureName"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct FeatureNamePath(String);

/// `/api/admin/features/{featureName}/tags/{type}/{value}`.
#[derive(IntoParams)]
#[into_params(names("featureName", "type", "value"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct TagPath(String, String, String);

/// `{name}` of a tag type, context field or strategy definition.
#[derive(IntoParams)]
#[into_params(names("name"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct NamePath(String);

/// `{id}` of a user, group, role or segment.
#[derive(IntoParams)]
#[into_params(names("id"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct IdPath(i64);

/// `{appName}`.
#[derive(IntoParams)]
#[into_params(names("appName"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct AppPath(String);

/// `{token}`: a key's id or its secret.
#[derive(IntoParams)]
#[into_params(names("token"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct TokenPath(String);

/// `/api/admin/user-admin/{id}/tokens/{tokenId}`.
#[derive(IntoParams)]
#[into_params(names("id", "tokenId"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct UserTokenPath(i64, uuid::Uuid);

// Mirrors of wire types that live outside `model` and `error`.

/// A feature to create in a project: only `name` is required.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = NewFeature)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct NewFeatureSchema {
    /// 1–100 URL-friendly characters, unique across all projects.
    name: String,
    /// The toggle type; `release` when absent.
    #[serde(rename = "type")]
    feature_type: Option<String>,
    /// A description.
    description: Option<String>,
    /// Whether clients emit impression events for it; false when absent.
    impression_data: Option<bool>,
}

/// A user to create: a user needs a username, an email, or both.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = NewUser)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct NewUserSchema {
    /// The login name.
    username: Option<String>,
    /// The email address (must contain `@`).
    email: Option<String>,
    /// The display name.
    name: Option<String>,
    /// The root role: Admin 1, Editor 2 or Viewer 3; Viewer when absent.
    root_role: Option<i64>,
}

/// A user that keys can act as.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = User)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct UserSchema {
    /// The user's id, assigned by the store: 1, 2, 3 …
    id: i64,
    /// The login name; a user has a username, an email, or both.
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<String>,
    /// The email address.
    #[serde(skip_serializing_if = "Option::is_none")]
    email: Option<String>,
    /// The display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    /// The id of the user's root role: Admin 1, Editor 2 or Viewer 3.
    root_role: i64,
    /// When the user was created.
    created_at: chrono::DateTime<chrono::Utc>,
}

/// A group of users; a project role given to a group is held by each of its members.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = Group)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct GroupSchema {
    /// The group's id, assigned by the store: 1, 2, 3 …
    id: i64,
    /// Its name, unique among groups.
    name: String,
    /// What it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    /// The ids of its members, ascending.
    users: Vec<i64>,
    /// When the group was created.
    created_at: chrono::DateTime<chrono::Utc>,
}

/// A member of a group to create: `{"user": {"id": 1}}`, or the user id itself.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = GroupMember)]
#[serde(untagged)]
#[allow(dead_code)]
pub(crate) enum GroupMemberSchema {
    /// The user's id.
    Id(i64),
    /// `{"user": {"id": 1}}`, as Unleash takes it.
    User {
        /// The user.
        user: GroupMemberUserSchema,
    },
}

/// `{"id": 1}`: the user's id.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = GroupMemberUser)]
#[allow(dead_code)]
pub(crate) struct GroupMemberUserSchema {
    /// The user's id.
    id: i64,
}

/// Where a role applies.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = RoleType)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
pub(crate) enum RoleTypeSchema {
    /// A root role (Admin, Editor, Viewer): held by a user everywhere.
    Root,
    /// A built-in project role (Owner, Member): held in a project.
    Project,
    /// A custom project role: held in a project.
    Custom,
}

/// One permission of a role, optionally limited to an environment.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = RolePermission)]
#[allow(dead_code)]
pub(crate) struct RolePermissionSchema {
    /// The permission, by Unleash name (e.g. `UPDATE_FEATURE_VARIANTS`).
    name: String,
    /// The environment it is limited to; every environment when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    environment: Option<String>,
}

/// A role: built-in (ids 1–5) or custom.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = Role)]
#[allow(dead_code)]
pub(crate) struct RoleSchema {
    /// The role's id.
    id: i64,
    /// Its name, unique among roles.
    name: String,
    /// What it is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    /// Where it applies.
    #[serde(rename = "type")]
    role_type: RoleTypeSchema,
    /// What holding it allows.
    permissions: Vec<RolePermissionSchema>,
}

/// A custom project role to create: `name` is required.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = NewRole)]
#[allow(dead_code)]
pub(crate) struct NewRoleSchema {
    /// 1–100 characters, unique among roles (built-in ones included).
    name: String,
    /// What the role is for.
    description: Option<String>,
    /// Project and environment permissions, each in every environment or in one.
    #[serde(default)]
    permissions: Vec<RolePermissionSchema>,
}

/// An audit event, as the event log lists it.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = Event)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct EventSchema {
    /// The event's id: 1 for the first event of the store, then one more per event.
    id: u64,
    /// The revision of the commit that recorded it.
    revision: u64,
    /// The event type, Unleash's name (`feature-environment-variants-updated`, …).
    #[serde(rename = "type")]
    event_type: String,
    /// Who made the change (the API key's name or the user's name).
    created_by: String,
    /// When the change was made.
    created_at: chrono::DateTime<chrono::Utc>,
    /// The project concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    project: Option<String>,
    /// The feature concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    feature_name: Option<String>,
    /// The environment concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    environment: Option<String>,
    /// The state after the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<serde_json::Value>,
    /// The state before the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pre_data: Option<serde_json::Value>,
}

/// The dry run of an import: what the import would report, nothing written.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = ImportValidation)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) struct ImportValidationSchema {
    /// What would make the import fail, under Unleash's messages.
    errors: Vec<crate::import::ValidationItem>,
    /// What deserves attention.
    warnings: Vec<crate::import::ValidationItem>,
    /// The permissions the import needs that the caller lacks.
    permissions: Vec<crate::import::ValidationItem>,
}

/// One permission of a key, optionally limited to a project and an environment.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = Grant)]
#[allow(dead_code)]
pub(crate) struct GrantSchema {
    /// What is allowed, by Unleash name.
    permission: String,
    /// The project it is limited to; every project when absent or `*`.
    #[serde(skip_serializing_if = "Option::is_none")]
    project: Option<String>,
    /// The environment it is limited to; every environment when absent or `*`.
    #[serde(skip_serializing_if = "Option::is_none")]
    environment: Option<String>,
}

/// What a key may do: `kind` is `admin`, `grants` or `user`.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = KeyAccess)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[allow(dead_code)]
pub(crate) enum KeyAccessSchema {
    /// Every permission everywhere.
    Admin,
    /// Exactly these grants.
    Grants {
        /// The grants.
        grants: Vec<GrantSchema>,
    },
    /// Whatever the user may do.
    User {
        /// The user's id.
        #[serde(rename = "user_id")]
        user_id: i64,
    },
}
