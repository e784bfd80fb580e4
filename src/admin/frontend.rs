//! The frontend API's read side (feature `frontend`): what a frontend key (a browser or
//! mobile SDK) sees — every flag of its projects in its environment, evaluated for the
//! caller's context by `unleash-yggdrasil`, Unleash's own engine, so that no rule reaches the
//! browser.
//!
//! The engine of a scope (environment and projects) is built from the client features
//! document of that scope ([`ToggleAdmin::client_features`]'s, with segments by reference),
//! once per document: the document is itself built once per store revision and cached, and
//! a new document (a change the scope sees) makes a new engine at its first request. No
//! request compiles rules.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, SecondsFormat, Utc};
use unleash_types::client_features::{ClientFeature, ClientFeatures, Context};
use unleash_yggdrasil::{EngineState, ExtendedVariantDef, UpdateMessage};

use super::ToggleAdmin;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::ClientFeaturesQuery;
use crate::model::{FrontendFeatures, FrontendToggle, FrontendVariant};

/// The most properties a context may carry; more → [`Error::Validation`] at `properties`.
/// (Each property is looked at by every constraint that names a custom field; ten thousand
/// of them are an attack, not a user.)
pub const MAX_CONTEXT_PROPERTIES: usize = 1000;

/// The longest value a context field or property may have, in bytes.
pub const MAX_CONTEXT_VALUE: usize = 8 * 1024;

/// How many engines the cache keeps; past that it starts afresh.
const CACHE_ENTRIES: usize = 1024;

/// A compiled engine and the document it was compiled from.
#[derive(Clone)]
struct Engine {
    features: Arc<ClientFeatures>,
    state: Arc<EngineState>,
}

/// The engines, per (environment, projects) scope.
#[derive(Default)]
pub(crate) struct FrontendEngines {
    engines: Mutex<HashMap<(String, Vec<String>), Engine>>,
}

impl fmt::Debug for FrontendEngines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.engines.lock().map(|e| e.len()).unwrap_or_default();
        f.debug_struct("FrontendEngines")
            .field("engines", &count)
            .finish()
    }
}

impl FrontendEngines {
    /// The engine of `features`: the cached one if it was built from this very document,
    /// otherwise a new one, cached for the document's scope.
    fn engine_for(&self, features: &Arc<ClientFeatures>) -> Engine {
        let scope = features
            .query
            .as_ref()
            .map(|q| {
                (
                    q.environment.clone().unwrap_or_default(),
                    q.projects.clone().unwrap_or_default(),
                )
            })
            .unwrap_or_default();
        if let Ok(engines) = self.engines.lock()
            && let Some(engine) = engines.get(&scope)
            && Arc::ptr_eq(&engine.features, features)
        {
            return engine.clone();
        }
        // Compiled outside the lock: two requests racing on a new document may both compile
        // it, and the later one's engine stays; both are the same document's.
        let state = EngineState::initial_state(Utc::now());
        if let Some(warnings) =
            state.take_state(UpdateMessage::FullResponse(features.as_ref().clone()))
        {
            for warning in warnings {
                tracing::warn!(
                    feature = %warning.toggle_name,
                    message = %warning.message,
                    "a flag's rules did not compile; it evaluates to disabled"
                );
            }
        }
        let engine = Engine {
            features: features.clone(),
            state: Arc::new(state),
        };
        if let Ok(mut engines) = self.engines.lock() {
            if engines.len() >= CACHE_ENTRIES {
                engines.clear();
            }
            engines.insert(scope, engine.clone());
        }
        engine
    }
}

impl ToggleAdmin {
    /// The frontend API's answer for a frontend key and a caller's context: every flag of
    /// the key's projects in its environment, evaluated for `context` by
    /// `unleash-yggdrasil`, by name. With `include_disabled` false (`GET /api/frontend`)
    /// only the enabled ones; with true (`/api/frontend/all`) all of them.
    ///
    /// `currentTime`, when absent, is now (as in Unleash); the caller's address
    /// (`remoteAddress`) is the HTTP layer's to fill in. A key that is not a frontend key →
    /// [`Error::NoAccess`]; a revoked or expired one → [`Error::AuthenticationRequired`];
    /// a context over the limits ([`MAX_CONTEXT_PROPERTIES`], [`MAX_CONTEXT_VALUE`]) or a
    /// `currentTime` that is not an RFC 3339 date-time → [`Error::Validation`] naming the
    /// field.
    pub async fn frontend_features<'a>(
        &self,
        authority: impl Into<super::Authority<'a>>,
        context: &Context,
        include_disabled: bool,
    ) -> Result<FrontendFeatures> {
        let (caller, scope) = self.sdk_scope(authority.into()).await?;
        if !caller.info.access.is_frontend() {
            return Err(super::wrong_key_type());
        }
        Ok(self
            .frontend_evaluator(scope, context)
            .await?
            .all(include_disabled))
    }

    /// The evaluation of a key's `scope` for `context` (the caller decides which keys may):
    /// the frontend API and OFREP evaluate through it, so that both give a context the same
    /// answer.
    pub(super) async fn frontend_evaluator(
        &self,
        scope: super::client_scope::Scope,
        context: &Context,
    ) -> Result<Evaluator> {
        check_context(context)?;
        let query = ClientFeaturesQuery {
            segments: true,
            ..ClientFeaturesQuery::default()
        };
        let document = self.client_document_in(scope, &query).await?;
        let engine = self.client.frontend.engine_for(&document.features);
        let context = if context.current_time.is_none() {
            Context {
                current_time: Some(Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)),
                ..context.clone()
            }
        } else {
            context.clone()
        };
        Ok(Evaluator {
            engine,
            context,
            etag: document.etag,
        })
    }
}

/// A scope's compiled flags and one context to evaluate them for.
pub(super) struct Evaluator {
    engine: Engine,
    context: Context,
    /// The ETag of the client document the engine was built from.
    etag: Arc<str>,
}

impl Evaluator {
    /// The flags of the scope, with their rules.
    pub(super) fn features(&self) -> &[ClientFeature] {
        &self.engine.features.features
    }

    /// The scope's client document the engine was compiled from.
    pub(super) fn document(&self) -> &ClientFeatures {
        &self.engine.features
    }

    /// The context the flags are evaluated for (`currentTime` filled in).
    pub(super) fn context(&self) -> &Context {
        &self.context
    }

    /// The ETag of the scope's client document: it changes exactly when a flag of the scope
    /// does.
    pub(super) fn document_etag(&self) -> &str {
        &self.etag
    }

    /// The environment the scope's flags are read in.
    pub(super) fn environment(&self) -> Option<&str> {
        self.engine
            .features
            .query
            .as_ref()
            .and_then(|q| q.environment.as_deref())
    }

    /// The scope's client document the engine was compiled from, shared.
    pub(super) fn shared_document(&self) -> &Arc<ClientFeatures> {
        &self.engine.features
    }

    /// Whether `feature` is on for the context and, when it is, the variant it gets (the
    /// SDKs' way: `isEnabled`, then `getVariant` for the enabled ones).
    pub(super) fn evaluate(&self, feature: &ClientFeature) -> (bool, Option<ExtendedVariantDef>) {
        let state = &self.engine.state;
        let enabled = state.is_enabled(&feature.name, &self.context, &None);
        let variant = enabled.then(|| state.get_variant(&feature.name, &self.context, &None));
        (enabled, variant)
    }

    /// Every flag for the context.
    pub(super) fn all(&self, include_disabled: bool) -> FrontendFeatures {
        let features = self.features();
        let mut toggles = Vec::with_capacity(if include_disabled {
            features.len()
        } else {
            features.len() / 2
        });
        for feature in features {
            let enabled = self
                .engine
                .state
                .is_enabled(&feature.name, &self.context, &None);
            if enabled || include_disabled {
                toggles.push(self.toggle(feature, enabled));
            }
        }
        FrontendFeatures { toggles }
    }

    /// One flag for the context.
    pub(super) fn one(&self, feature: &ClientFeature) -> FrontendToggle {
        self.toggle(feature, self.enabled(feature))
    }

    /// Whether `feature` is on for the context (what [`one`](Self::one) answers as
    /// `enabled`, without choosing a variant).
    pub(super) fn enabled(&self, feature: &ClientFeature) -> bool {
        self.engine
            .state
            .is_enabled(&feature.name, &self.context, &None)
    }

    /// The answer for `feature`, `enabled` or not for the context: its variant if enabled.
    fn toggle(&self, feature: &ClientFeature, enabled: bool) -> FrontendToggle {
        let state = &self.engine.state;
        let context = &self.context;
        let variant = if enabled {
            let chosen = state.get_variant(&feature.name, context, &None);
            FrontendVariant {
                name: chosen.name,
                enabled: chosen.enabled,
                feature_enabled: enabled,
                feature_enabled_deprecated: enabled,
                payload: chosen.payload,
            }
        } else {
            FrontendVariant {
                name: "disabled".to_owned(),
                enabled: false,
                feature_enabled: false,
                feature_enabled_deprecated: false,
                payload: None,
            }
        };
        FrontendToggle {
            name: feature.name.clone(),
            enabled,
            impression_data: feature.impression_data.unwrap_or(false),
            variant,
        }
    }
}

/// The limits of a context, and its `currentTime`'s form.
fn check_context(context: &Context) -> Result<()> {
    let mut problems = Vec::new();
    let fields = [
        ("userId", &context.user_id),
        ("sessionId", &context.session_id),
        ("environment", &context.environment),
        ("appName", &context.app_name),
        ("currentTime", &context.current_time),
        ("remoteAddress", &context.remote_address),
    ];
    for (name, value) in fields {
        if value.as_ref().is_some_and(|v| v.len() > MAX_CONTEXT_VALUE) {
            problems.push(ErrorDetail::at(
                name,
                format!("a context value may have at most {MAX_CONTEXT_VALUE} bytes"),
            ));
        }
    }
    if let Some(time) = &context.current_time
        && DateTime::parse_from_rfc3339(time).is_err()
    {
        problems.push(ErrorDetail::at(
            "currentTime",
            format!(
                "currentTime must be an RFC 3339 date-time (2024-01-31T12:00:00Z), not {}",
                serde_json::Value::from(time.chars().take(64).collect::<String>())
            ),
        ));
    }
    if let Some(properties) = &context.properties {
        if properties.len() > MAX_CONTEXT_PROPERTIES {
            problems.push(ErrorDetail::at(
                "properties",
                format!(
                    "a context may have at most {MAX_CONTEXT_PROPERTIES} properties, not {}",
                    properties.len()
                ),
            ));
        } else {
            let mut long: Vec<&String> = properties
                .iter()
                .filter(|(k, v)| k.len() > MAX_CONTEXT_VALUE || v.len() > MAX_CONTEXT_VALUE)
                .map(|(k, _)| k)
                .collect();
            long.sort();
            for name in long.into_iter().take(10) {
                problems.push(ErrorDetail::at(
                    format!("properties.{}", name.chars().take(64).collect::<String>()),
                    format!("a context property may have at most {MAX_CONTEXT_VALUE} bytes"),
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::validation("The context is not valid.", problems))
    }
}
