//! What the handlers' `utoipa::path` annotations share: the error responses, the path
//! parameters, the document's frame; and, with feature `openapi`, the route that serves the
//! document at `GET /api/admin/openapi.json`.
//!
//! The schemas are derived from the wire types the handlers use (`ToSchema` on the model
//! types), the operations and the routes from the handlers' annotations: each route is
//! declared once. This module uses no handler module.

use std::collections::BTreeMap;

#[cfg(feature = "openapi")]
use axum::Extension;
#[cfg(feature = "openapi")]
use axum::http::StatusCode;
#[cfg(feature = "openapi")]
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::{IntoParams, IntoResponses, Modify, OpenApi};
#[cfg(feature = "openapi")]
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::error::{ErrorBody, ErrorDetail};

/// The name of the security scheme: the API key in the `Authorization` header.
pub(crate) const SECURITY_SCHEME: &str = "apiKey";

/// The document's frame: its title and description, the error schemas and the API-key
/// security scheme. The paths come from the routes (see [`super::api`]): each route is
/// declared once, by its handler's `utoipa::path` annotation.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "toggle-admin",
        description = "The admin API of a feature-toggle service, wire-compatible with Unleash's admin API. Every operation but this document's needs the API key in the `Authorization` header (`Authorization: <key>`; a `Bearer ` prefix is also accepted). Every error body is `{id, name, message, details?}`."
    ),
    components(schemas(ErrorBody, ErrorDetail)),
    modifiers(&SecurityAddon),
    security(("apiKey" = []))
)]
struct ApiDoc;

/// The frame the routes add their paths and schemas to.
pub(crate) fn frame() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

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

/// The document, encoded once when the router is built (`None` if it could not be), for
/// [`document`].
#[cfg(feature = "openapi")]
#[derive(Clone)]
pub(crate) struct Document(pub(crate) Option<std::sync::Arc<str>>);

/// The route that serves the document, without authentication.
#[cfg(feature = "openapi")]
pub(crate) fn routes() -> OpenApiRouter<crate::ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(document))
}

/// The OpenAPI document of this API. No key needed.
#[cfg(feature = "openapi")]
#[utoipa::path(
    get,
    path = "/api/admin/openapi.json",
    tag = "meta",
    security(()),
    responses(
        (status = 200, description = "The OpenAPI 3.1 document of this API.", content_type = "application/json", body = Object),
    )
)]
async fn document(Extension(Document(json)): Extension<Document>) -> Response {
    match json {
        Some(json) => (
            StatusCode::OK,
            [(
                axum::http::header::CONTENT_TYPE,
                "application/json; charset=utf-8",
            )],
            json.to_string(),
        )
            .into_response(),
        None => super::error::error_response(&crate::error::Error::internal(
            "could not encode the OpenAPI document",
            None,
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
            "NameExistsError (a name is taken) or ConflictError (concurrent writers, try again; or what is deleted is still in use, each user in `details`).",
        ),
        (
            "500",
            "InternalError: the store failed. The body says only that; the cause is logged.",
        ),
        (
            "503",
            "ServiceUnavailable: the store's database cannot be reached or did not answer in \
             time, or the request took longer than the server's request timeout; retry later.",
        ),
        (
            "507",
            "InsufficientStorage: the store is out of disk space; the write was not made. \
             Writes work again once space is freed.",
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

/// `/api/admin/tags/{type}`.
#[derive(IntoParams)]
#[into_params(names("type"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct TagTypePath(String);

/// `/api/admin/tags/{type}/{value}`.
#[derive(IntoParams)]
#[into_params(names("type", "value"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct TagValuePath(String, String);

/// `…/link/{linkId}`.
#[derive(IntoParams)]
#[into_params(names("projectId", "featureName", "linkId"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct LinkPath(String, String, String);

/// `{id}` of a feature type.
#[derive(IntoParams)]
#[into_params(names("id"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct FeatureTypePath(String);

/// `/api/admin/segments/strategies/{strategyId}`.
#[derive(IntoParams)]
#[into_params(names("strategyId"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct StrategyIdPath(String);

/// `{name}` of a tag type, context field or strategy definition.
#[derive(IntoParams)]
#[into_params(names("name"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct NamePath(String);

/// `/api/admin/context/{name}/legal-values/{value}`.
#[derive(IntoParams)]
#[into_params(names("name", "value"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct LegalValuePath(String, String);

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
pub(crate) struct ApiKeyPath(String);

/// `/api/admin/user-admin/{id}/tokens/{tokenId}`: the user's id, and the key's number or id (a
/// UUID).
#[derive(IntoParams)]
#[into_params(names("id", "tokenId"), parameter_in = Path)]
#[allow(dead_code)]
pub(crate) struct PersonalApiKeyPath(i64, String);
