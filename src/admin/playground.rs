//! The playground: what every flag of some projects gives a context, and why.
//!
//! A flag's verdict (`isEnabled`, `variant`) is the frontend API's, from the same document,
//! the same cached `unleash-yggdrasil` engine and the same code path
//! ([`ToggleAdmin::frontend_evaluator`]), so the playground and an SDK never disagree. The
//! reasons (each strategy's, constraint's and segment's result) are the same engine's,
//! asked part by part (see `playground_explain.rs`).
//!
//! The verdicts are read from the client document of the latest revision and the reasons
//! from the stored strategies of the latest revision; a change committed between the two
//! reads can show a reason of the newer state beside a verdict of the older one, for that
//! one request.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use unleash_types::client_features::{ClientFeature, Context};

use super::client_scope::Scope;
use super::frontend::Evaluator;
use super::playground_context::{lenient_context, strict_context};
use super::playground_explain::{DependencyProbe, Explainer};
use super::reader::Reader;
use super::records::{FeatureEnvironmentRecord, decode_opt, feature_environment_key};
use super::{Authority, ToggleAdmin};
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{
    AdvancedPlaygroundEnvironmentFeature, AdvancedPlaygroundFeature, AdvancedPlaygroundRequest,
    AdvancedPlaygroundResponse, Environment, PlaygroundFeature, PlaygroundProjects,
    PlaygroundRequest, PlaygroundResponse, PlaygroundStrategies, PlaygroundVariant,
    PlaygroundWarnings, Project,
};
use crate::store::Collection;

/// The most evaluations (environments × flags × context combinations) one advanced
/// playground request may ask for, as in Unleash: more → [`Error::Validation`].
pub const MAX_PLAYGROUND_EVALUATIONS: usize = 15_000;

impl ToggleAdmin {
    /// Every flag of `request.projects` (every project when absent or `"*"`) in
    /// `request.environment`, evaluated for `request.context`, each with its strategies',
    /// constraints' and segments' results (`POST /api/admin/playground`).
    ///
    /// Any admin-API key may (Unleash needs no permission); a client or frontend key →
    /// [`Error::NoAccess`]. [`Error::Validation`] naming the field for: an environment that
    /// does not exist (`/environment`), a project that does not exist (`/projects/{i}`;
    /// Unleash silently shows nothing for it), a context without `appName`
    /// (`/context/appName`), a context value that is not a string (`/context/{field}`,
    /// `/context/properties/{name}`; `null` is absent), a `currentTime` that is not an
    /// RFC 3339 date-time, and a context over the frontend API's limits.
    pub async fn playground<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        request: &PlaygroundRequest,
    ) -> Result<PlaygroundResponse> {
        self.admit(authority.into(), &[]).await?;
        let (context, scope) = self.playground_request(request).await?;
        let evaluation = self.playground_evaluation(scope, &context).await?;
        let features = evaluation.features();
        Ok(PlaygroundResponse {
            input: request.clone(),
            features,
        })
    }

    /// The playground over several environments and, for each context field whose value
    /// is comma-separated (`"userId": "1,2"`, `"properties": {"country": "NO,DK"}`), each of
    /// its values: every combination, in every environment, as Unleash's advanced playground
    /// (`POST /api/admin/playground/advanced`).
    ///
    /// As [`playground`](Self::playground), plus: no environment → [`Error::Validation`] at
    /// `/environments`; an unknown one at `/environments/{i}`; more than
    /// [`MAX_PLAYGROUND_EVALUATIONS`] evaluations → [`Error::Validation`]. A top-level context
    /// field that is not a string is left out and named in `warnings`, as in Unleash.
    pub async fn advanced_playground<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        request: &AdvancedPlaygroundRequest,
    ) -> Result<AdvancedPlaygroundResponse> {
        self.admit(authority.into(), &[]).await?;
        if request.environments.is_empty() {
            return Err(Error::invalid_at(
                "/environments",
                "at least one environment is needed",
            ));
        }
        let (flat, invalid) = lenient_context(&request.context)?;
        let scopes = self
            .playground_scope(&request.environments, request.projects.as_ref(), |i| {
                format!("/environments/{i}")
            })
            .await?;
        let combinations = combinations(&flat, scopes.len())?;
        let mut by_name: Vec<AdvancedPlaygroundFeature> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for scope in scopes {
            let environment = scope.environment.clone();
            let mut evaluation: Option<Evaluation> = None;
            for combination in &combinations {
                let context = strict_context(combination)?;
                let current = match evaluation.take() {
                    None => self.playground_evaluation(scope.clone(), &context).await?,
                    // The probes are compiled once per environment; only the verdicts are
                    // asked again for each context.
                    Some(previous) => Evaluation {
                        evaluator: self.frontend_evaluator(scope.clone(), &context).await?,
                        ..previous
                    },
                };
                check_size(
                    request.environments.len(),
                    current.explainers.len(),
                    combinations.len(),
                )?;
                for one in current.features() {
                    let position = *index.entry(one.name.clone()).or_insert_with(|| {
                        by_name.push(AdvancedPlaygroundFeature {
                            name: one.name.clone(),
                            project_id: one.project_id.clone(),
                            environments: BTreeMap::new(),
                        });
                        by_name.len() - 1
                    });
                    if let Some(entry) = by_name.get_mut(position) {
                        entry
                            .environments
                            .entry(environment.clone())
                            .or_default()
                            .push(AdvancedPlaygroundEnvironmentFeature {
                                name: one.name,
                                environment: environment.clone(),
                                context: combination.clone(),
                                project_id: one.project_id,
                                is_enabled: one.is_enabled,
                                is_enabled_in_current_environment: one
                                    .is_enabled_in_current_environment,
                                has_unsatisfied_dependency: one.has_unsatisfied_dependency,
                                strategies: one.strategies,
                                variant: one.variant,
                                variants: one.variants,
                            });
                    }
                }
                evaluation = Some(current);
            }
        }
        Ok(AdvancedPlaygroundResponse {
            input: request.clone(),
            features: by_name,
            warnings: (!invalid.is_empty()).then_some(PlaygroundWarnings {
                invalid_context_properties: invalid,
            }),
        })
    }

    /// The context and the scope of a request of one environment, checked.
    pub(super) async fn playground_request(
        &self,
        request: &PlaygroundRequest,
    ) -> Result<(Context, Scope)> {
        let context = strict_context(&request.context)?;
        let scope = self
            .playground_scope(
                std::slice::from_ref(&request.environment),
                request.projects.as_ref(),
                |_| "/environment".to_owned(),
            )
            .await?
            .pop()
            .ok_or_else(|| Error::internal("the playground lost its environment", None))?;
        Ok((context, scope))
    }

    /// The scope of each of `environments` with `projects`, every one of which must exist;
    /// `at(i)` names the `i`th environment's field in an error.
    async fn playground_scope(
        &self,
        environments: &[String],
        projects: Option<&PlaygroundProjects>,
        at: impl Fn(usize) -> String,
    ) -> Result<Vec<Scope>> {
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let (_, known) = reader
            .list_decoded::<Environment>(Collection::Environments)
            .await?;
        let (_, existing) = reader.list_decoded::<Project>(Collection::Projects).await?;
        let mut problems = Vec::new();
        for (i, environment) in environments.iter().enumerate() {
            if !known.iter().any(|e| e.name == *environment) {
                problems.push(ErrorDetail::at(
                    at(i),
                    format!("the environment {environment:?} does not exist"),
                ));
            }
        }
        let projects = match projects {
            None | Some(PlaygroundProjects::All) => None,
            Some(PlaygroundProjects::Only(list)) => {
                for (i, project) in list.iter().enumerate() {
                    if !existing.iter().any(|p| p.id == *project) {
                        problems.push(ErrorDetail::at(
                            format!("/projects/{i}"),
                            format!("the project {project:?} does not exist"),
                        ));
                    }
                }
                Some(list.clone())
            }
        };
        if !problems.is_empty() {
            return Err(Error::validation(
                "The playground request is not valid.",
                problems,
            ));
        }
        Ok(environments
            .iter()
            .map(|environment| Scope {
                projects: projects.clone(),
                environment: environment.clone(),
            })
            .collect())
    }

    /// The frontend API's evaluation of `scope` for `context`, and the explanations of its
    /// flags.
    async fn playground_evaluation(&self, scope: Scope, context: &Context) -> Result<Evaluation> {
        let evaluator = self.frontend_evaluator(scope.clone(), context).await?;
        let explainers = self
            .playground_explainers(&scope.environment, evaluator.features())
            .await?;
        let names = evaluator.features().iter().map(|f| f.name.as_str());
        Ok(Evaluation {
            dependencies: DependencyProbe::build(evaluator.document(), names),
            evaluator,
            explainers,
        })
    }

    /// The explainers of `features` (flags of an evaluator's document) in `environment`, in
    /// their order: only their own feature-environment records are read.
    pub(super) async fn playground_explainers(
        &self,
        environment: &str,
        features: impl IntoIterator<Item = &ClientFeature>,
    ) -> Result<Vec<Explainer>> {
        let features: Vec<&ClientFeature> = features.into_iter().collect();
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let (_, projects) = reader.list_decoded::<Project>(Collection::Projects).await?;
        let with_environment: Vec<&str> = projects
            .iter()
            .filter(|p| p.environments.iter().any(|e| e == environment))
            .map(|p| p.id.as_str())
            .collect();
        let keys: Vec<_> = features
            .iter()
            .map(|f| feature_environment_key(&f.name, environment))
            .collect();
        let records = reader.get_all(&keys).await?;
        let (_, segments) = reader.segment_list().await?;
        let segments = segments.iter().map(|s| (s.id, s)).collect();
        let mut explainers = Vec::with_capacity(features.len());
        for ((feature, key), record) in features.iter().zip(&keys).zip(&records) {
            let in_environment = feature
                .project
                .as_deref()
                .is_some_and(|p| with_environment.contains(&p));
            let stored: FeatureEnvironmentRecord = if in_environment {
                decode_opt(key, record.as_ref())?.unwrap_or_default()
            } else {
                FeatureEnvironmentRecord::default()
            };
            explainers.push(Explainer::build(
                feature,
                environment,
                &stored.strategies,
                stored.variants,
                &segments,
            )?);
        }
        Ok(explainers)
    }
}

/// An environment's flags compiled for the playground: the frontend API's evaluator for one
/// context, and the probes that explain each flag (every flag of the evaluator's document,
/// or one page of them).
pub(super) struct Evaluation {
    pub(super) evaluator: Evaluator,
    pub(super) explainers: Vec<Explainer>,
    pub(super) dependencies: DependencyProbe,
}

impl Evaluation {
    /// Every flag for the evaluator's context.
    fn features(&self) -> Vec<PlaygroundFeature> {
        self.explainers
            .iter()
            .enumerate()
            .map(|(i, explainer)| self.feature(i, explainer))
            .collect()
    }

    /// The flag `explainer` explains, the `i`th of the evaluator's document, for the
    /// evaluator's context.
    pub(super) fn feature(&self, i: usize, explainer: &Explainer) -> PlaygroundFeature {
        let evaluator = &self.evaluator;
        let context = evaluator.context();
        // The explainers were built in the document's order; an evaluator of a newer
        // document (a commit between two contexts) is searched instead.
        let features = evaluator.features();
        let verdict = features
            .get(i)
            .filter(|f| f.name == explainer.name())
            .or_else(|| features.iter().find(|f| f.name == explainer.name()))
            .map(|f| evaluator.one(f));
        let explained = explainer.explain(context);
        let (is_enabled, variant) = match verdict {
            Some(toggle) => (
                toggle.enabled,
                PlaygroundVariant {
                    name: toggle.variant.name,
                    enabled: toggle.variant.enabled,
                    payload: toggle.variant.payload,
                    feature_enabled: toggle.variant.feature_enabled,
                    feature_enabled_deprecated: toggle.variant.feature_enabled_deprecated,
                },
            ),
            None => (
                false,
                PlaygroundVariant {
                    name: "disabled".to_owned(),
                    enabled: false,
                    payload: None,
                    feature_enabled: false,
                    feature_enabled_deprecated: false,
                },
            ),
        };
        PlaygroundFeature {
            name: explainer.name().to_owned(),
            project_id: explainer.project().to_owned(),
            is_enabled,
            is_enabled_in_current_environment: explainer.enabled_in_environment(),
            has_unsatisfied_dependency: self.dependencies.unsatisfied(explainer.name(), context),
            strategies: PlaygroundStrategies {
                result: explained.result,
                data: explained.data,
            },
            variant,
            variants: explained
                .variants
                .unwrap_or_else(|| explainer.variants().to_vec()),
        }
    }
}

/// Every combination of the comma-separated values of `flat`'s fields, first field slowest
/// (Unleash's order). Refused before it is built when it would exceed
/// [`MAX_PLAYGROUND_EVALUATIONS`] with one flag per environment already.
fn combinations(flat: &Map<String, Value>, environments: usize) -> Result<Vec<Map<String, Value>>> {
    let split: Vec<(&String, Vec<&str>)> = flat
        .iter()
        .map(|(name, value)| {
            (
                name,
                value.as_str().unwrap_or_default().split(',').collect(),
            )
        })
        .collect();
    let count = split
        .iter()
        .try_fold(1usize, |n, (_, values)| n.checked_mul(values.len()))
        .unwrap_or(usize::MAX);
    if count.saturating_mul(environments) > MAX_PLAYGROUND_EVALUATIONS {
        check_size(environments, 1, count)?;
    }
    let mut out = vec![Map::new()];
    for (name, values) in split {
        out = out
            .into_iter()
            .flat_map(|partial| {
                values.iter().map(move |value| {
                    let mut next = partial.clone();
                    next.insert(name.clone(), Value::String((*value).to_owned()));
                    next
                })
            })
            .collect();
    }
    Ok(out)
}

/// Unleash's limit on the evaluations of one advanced request, with its message.
fn check_size(environments: usize, features: usize, contexts: usize) -> Result<()> {
    let total = environments
        .saturating_mul(features)
        .saturating_mul(contexts);
    if total > MAX_PLAYGROUND_EVALUATIONS {
        return Err(Error::invalid_at(
            "/context",
            format!(
                "Rejecting evaluation as it would generate {total} combinations exceeding {MAX_PLAYGROUND_EVALUATIONS} limit. Please reduce the number of selected environments ({environments}), features ({features}), context field combinations ({contexts})."
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn combinations_are_the_cartesian_product() {
        let (flat, invalid) = lenient_context(&map(json!({
            "appName": "a", "userId": "1,2", "size": 3, "properties": {"country": "NO,DK,SE"}
        })))
        .unwrap_or_default();
        assert_eq!(invalid, vec!["size".to_owned()]);
        let all = combinations(&flat, 1).unwrap_or_default();
        assert_eq!(all.len(), 6);
        assert!(all.iter().all(|c| c.get("appName") == Some(&json!("a"))));
        assert!(all.contains(&map(
            json!({"appName": "a", "userId": "2", "country": "SE"})
        )));
    }

    #[test]
    fn too_many_combinations_are_refused_before_they_are_built() {
        let values = (0..200)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let (flat, _) = lenient_context(&map(json!({
            "appName": "a", "userId": values.clone(), "sessionId": values
        })))
        .unwrap_or_default();
        let error = combinations(&flat, 1).err().map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.contains("exceeding 15000 limit")),
            "{error:?}"
        );
    }
}
