//! The client API for server-side SDKs: `GET /api/client/features`, `POST
//! /api/client/register`, `POST /api/client/metrics`; and the admin side of its metrics,
//! `GET /api/admin/client-metrics/features/{name}`.
//!
//! Any valid key may call the client routes: a client key sees its projects in its
//! environment, other keys every project in `default` (as in Unleash). The features response
//! carries an `ETag`; a request whose `If-None-Match` holds it gets 304 with no body.

use axum::body::Body;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpResult;
use super::extract::{AnyKey, Authenticated, JsonValue, Params, QueryParams};
use crate::ToggleAdmin;
use crate::error::Error;
use crate::model::ClientFeaturesQuery;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(features))
        .routes(routes!(feature))
        .routes(routes!(register))
        .routes(routes!(metrics))
        .routes(routes!(feature_usage))
        .routes(routes!(raw_metrics))
}

/// An SDK body: leniently decoded (SDKs send fields of their own), a wrong shape → 400.
pub(super) fn sdk_body<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, Error> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        Error::invalid_at(
            if path == "." { String::new() } else { path },
            e.into_inner().to_string(),
        )
    })
}

/// Register an SDK instance (Unleash's `clientApplicationSchema`): 202, no body.
#[utoipa::path(
    post,
    path = "/api/client/register",
    tag = "client",
    request_body(content = Object, description = "appName, instanceId, sdkVersion, strategies, started, interval.", content_type = "application/json"),
    responses(
        (status = 202, description = "Registered; no body."),
        super::openapi::BodyErrors
    )
)]
async fn register(
    State(admin): State<ToggleAdmin>,
    AnyKey(caller): AnyKey,
    JsonValue(body): JsonValue,
) -> HttpResult<StatusCode> {
    let registration: unleash_types::client_metrics::ClientApplication = sdk_body(body)?;
    admin.register_client(&caller, &registration).await?;
    Ok(StatusCode::ACCEPTED)
}

/// Report usage metrics (Unleash's `clientMetricsSchema`): 202, no body. Buffered; see
/// [`ToggleAdmin::record_client_metrics`].
#[utoipa::path(
    post,
    path = "/api/client/metrics",
    tag = "client",
    request_body(content = Object, description = "appName, instanceId, bucket {start, stop, toggles}.", content_type = "application/json"),
    responses(
        (status = 202, description = "Accepted; no body."),
        super::openapi::BodyErrors
    )
)]
async fn metrics(
    State(admin): State<ToggleAdmin>,
    AnyKey(caller): AnyKey,
    JsonValue(body): JsonValue,
) -> HttpResult<StatusCode> {
    let report: unleash_types::client_metrics::ClientMetrics = sdk_body(body)?;
    admin.record_client_metrics(&caller, &report).await?;
    Ok(StatusCode::ACCEPTED)
}

/// A feature's last hour of usage and the applications that reported it (Unleash's
/// `featureUsageSchema`).
#[utoipa::path(
    get,
    path = "/api/admin/client-metrics/features/{name}",
    tag = "metrics",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "The feature's usage.", body = crate::model::FeatureUsage),
        super::openapi::Errors
    )
)]
async fn feature_usage(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<super::error::Json<crate::model::FeatureUsage>> {
    Ok(super::error::Json::ok(
        admin.feature_usage(&caller, &name).await?,
    ))
}

/// A feature's raw metrics: its counts per application, environment and hour of the last
/// 48 hours (Unleash's `featureMetricsSchema`).
#[utoipa::path(
    get,
    path = "/api/admin/client-metrics/features/{name}/raw",
    tag = "metrics",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "The feature's raw metrics.", body = crate::model::FeatureMetrics),
        super::openapi::Errors
    )
)]
async fn raw_metrics(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<super::error::Json<crate::model::FeatureMetrics>> {
    Ok(super::error::Json::ok(crate::model::FeatureMetrics {
        version: 1,
        maturity: "stable".to_owned(),
        data: admin.feature_metrics(&caller, &name).await?,
    }))
}

/// One feature as the client API shows it to the key (Unleash's `clientFeatureSchema`);
/// 404 when the key does not see it.
#[utoipa::path(
    get,
    path = "/api/client/features/{featureName}",
    tag = "client",
    params(super::openapi::FeatureNamePath),
    responses(
        (status = 200, description = "The feature.", content_type = "application/json"),
        super::openapi::Errors
    )
)]
async fn feature(
    State(admin): State<ToggleAdmin>,
    AnyKey(caller): AnyKey,
    headers: HeaderMap,
    Params(name): Params<String>,
) -> HttpResult<super::error::Json<crate::model::OneClientFeature>> {
    let segments = headers
        .get("unleash-client-spec")
        .and_then(|v| v.to_str().ok())
        .and_then(spec_version)
        .is_some_and(|v| v >= SEGMENTS_SPEC);
    Ok(super::error::Json::ok(
        admin.client_feature(&caller, &name, segments).await?.into(),
    ))
}

/// The `Unleash-Client-Spec` version from which an SDK handles segments by reference.
const SEGMENTS_SPEC: (u64, u64, u64) = (4, 2, 0);

/// `?project=` (repeatable), `?namePrefix=`, `?tag=type:value` (repeatable).
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // Documents the parameters; they are read as pairs.
struct FeaturesParams {
    project: Option<Vec<String>>,
    name_prefix: Option<String>,
    tag: Option<Vec<String>>,
}

/// Unleash's client features document (`version: 2`, `features`, `segments` when the SDK
/// sends `Unleash-Client-Spec` ≥ 4.2.0, `query`).
#[utoipa::path(
    get,
    path = "/api/client/features",
    tag = "client",
    params(FeaturesParams),
    responses(
        (status = 200, description = "The features the key sees, with an ETag.", content_type = "application/json"),
        (status = 304, description = "Unchanged since the ETag sent in If-None-Match; no body."),
        super::openapi::Errors
    )
)]
async fn features(
    State(admin): State<ToggleAdmin>,
    AnyKey(caller): AnyKey,
    headers: HeaderMap,
    QueryParams(pairs): QueryParams<Vec<(String, String)>>,
) -> HttpResult<Response> {
    let mut query = ClientFeaturesQuery {
        segments: headers
            .get("unleash-client-spec")
            .and_then(|v| v.to_str().ok())
            .and_then(spec_version)
            .is_some_and(|v| v >= SEGMENTS_SPEC),
        ..ClientFeaturesQuery::default()
    };
    for (name, value) in pairs {
        match name.as_str() {
            "project" => query.projects.push(value),
            "namePrefix" => query.name_prefix = Some(value),
            "tag" => match value.split_once(':') {
                Some((tag_type, tag_value)) => {
                    query.tags.push((tag_type.to_owned(), tag_value.to_owned()))
                }
                None => {
                    return Err(Error::invalid_at(
                        "/tag",
                        format!("a tag filter is written type:value, not \"{value}\""),
                    )
                    .into());
                }
            },
            _ => {}
        }
    }
    query.projects.sort();
    query.projects.dedup();
    query.tags.sort();
    query.tags.dedup();
    let document = admin.client_features(&caller, &query).await?;
    let etag = HeaderValue::from_str(&document.etag)
        .map_err(|e| Error::internal("an ETag is not a header value", Some(Box::new(e))))?;
    let fresh = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == &*document.etag);
    let builder = Response::builder()
        .header(header::ETAG, etag)
        .header(header::CACHE_CONTROL, "no-cache");
    let response = if fresh {
        builder.status(StatusCode::NOT_MODIFIED).body(Body::empty())
    } else {
        builder
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json; charset=utf-8")
            .body(Body::from(Bytes::from_owner(SharedText(document.json))))
    };
    response.map_err(|e| Error::internal("could not build a response", Some(Box::new(e))).into())
}

/// A cached document's text as a body, without copying it.
struct SharedText(std::sync::Arc<str>);

impl AsRef<[u8]> for SharedText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// `major.minor.patch` (a pre-release or build suffix ignored).
fn spec_version(text: &str) -> Option<(u64, u64, u64)> {
    let core = text.trim().trim_start_matches('v');
    let core = core.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>());
    let major = parts.next()?.ok()?;
    let minor = parts.next().unwrap_or(Ok(0)).ok()?;
    let patch = parts.next().unwrap_or(Ok(0)).ok()?;
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::spec_version;

    #[test]
    fn spec_versions_parse() {
        assert_eq!(spec_version("4.2.0"), Some((4, 2, 0)));
        assert_eq!(spec_version("5.1.9-beta.1"), Some((5, 1, 9)));
        assert_eq!(spec_version("4"), Some((4, 0, 0)));
        assert_eq!(spec_version("x"), None);
    }
}
