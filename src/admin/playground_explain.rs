//! Why a flag is on or off for a context: each strategy's result, each constraint's, each
//! segment's, every one of them decided by `unleash-yggdrasil`, the engine the frontend API
//! evaluates with.
//!
//! The engine answers for a whole flag only. So each part is asked on its own, as a flag of
//! its own compiled by the engine: a strategy as the flag's only strategy; a constraint as
//! the only constraint of a `default` strategy; a segment as the only segment of a `default`
//! strategy. Each probe keeps the flag's name, since a rollout without a `groupId` hashes on
//! it. No rule is written here: every `true` and `false` is the engine's.
//!
//! The probes of an environment's flags are compiled once ([`Explainers::build`]) and then
//! asked for each context (the advanced playground asks them for many).

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::Utc;
use unleash_types::client_features::{
    ClientFeature, ClientFeatures, Context, Segment as WireSegment, Strategy,
};
use unleash_yggdrasil::{EngineState, KNOWN_STRATEGIES, UpdateMessage};

use super::client::{client_strategy, wire};
use crate::error::Result;
use crate::model::{
    Constraint, EvaluationStatus, FeatureStrategy, Outcome, PlaygroundConstraint,
    PlaygroundSegment, PlaygroundStrategy, PlaygroundStrategyVariant, Segment, StrategyLinks,
    StrategyResult,
};

/// A flag compiled alone: the engine's answer for one part of a flag.
struct Probe {
    name: String,
    state: EngineState,
}

impl Probe {
    /// `feature` with only `strategies`, switched on, without dependencies or variants of
    /// its own (a strategy's variants are its own).
    fn new(feature: &ClientFeature, strategies: Vec<Strategy>, segments: &[WireSegment]) -> Self {
        let probe = ClientFeature {
            enabled: true,
            strategies: Some(strategies),
            variants: None,
            dependencies: None,
            ..feature.clone()
        };
        let state = EngineState::initial_state(Utc::now());
        // A part that does not compile (a segment that no longer exists) is off, as the
        // whole flag is for the frontend API; the frontend engine logs the warning.
        let _ = state.take_state(UpdateMessage::FullResponse(ClientFeatures {
            version: 2,
            features: vec![probe],
            segments: Some(segments.to_vec()),
            query: None,
            meta: None,
        }));
        Self {
            name: feature.name.clone(),
            state,
        }
    }

    fn holds(&self, context: &Context) -> bool {
        self.state.is_enabled(&self.name, context, &None)
    }

    /// The strategy variant the context gets, if the probe is enabled and its strategy has
    /// variants.
    fn variant(&self, context: &Context) -> Option<PlaygroundStrategyVariant> {
        let chosen = self.state.get_variant(&self.name, context, &None);
        chosen.enabled.then_some(PlaygroundStrategyVariant {
            name: chosen.name,
            enabled: true,
            payload: chosen.payload,
        })
    }
}

/// A `default` strategy with these constraints and segments: what a strategy's conditions
/// say apart from its own rule.
fn conditions(
    constraints: Vec<unleash_types::client_features::Constraint>,
    segments: Vec<i32>,
) -> Strategy {
    Strategy {
        name: "default".to_owned(),
        sort_order: None,
        segments: Some(segments),
        constraints: Some(constraints),
        parameters: None,
        variants: None,
    }
}

/// A constraint and its probe.
struct ConstraintProbe {
    constraint: Constraint,
    probe: Probe,
}

impl ConstraintProbe {
    fn new(feature: &ClientFeature, constraint: &Constraint) -> Result<Self> {
        let wired = wire(constraint)?;
        Ok(Self {
            constraint: written_out(constraint),
            probe: Probe::new(feature, vec![conditions(vec![wired], Vec::new())], &[]),
        })
    }

    fn explain(&self, context: &Context) -> PlaygroundConstraint {
        PlaygroundConstraint {
            constraint: self.constraint.clone(),
            result: self.probe.holds(context),
        }
    }
}

/// A constraint with its defaults written, as Unleash shows it.
fn written_out(constraint: &Constraint) -> Constraint {
    Constraint {
        case_insensitive: Some(constraint.is_case_insensitive()),
        inverted: Some(constraint.is_inverted()),
        values: Some(constraint.values.clone().unwrap_or_default()),
        ..constraint.clone()
    }
}

/// A segment, its probe and its constraints' probes.
struct SegmentProbe {
    id: i64,
    name: String,
    probe: Probe,
    constraints: Vec<ConstraintProbe>,
}

/// A strategy and the probes that explain it.
struct StrategyProbe {
    stored: FeatureStrategy,
    /// The strategy alone; for a custom strategy (which the engine cannot evaluate), its
    /// constraints and segments alone.
    probe: Probe,
    custom: bool,
    constraints: Vec<ConstraintProbe>,
    segments: Vec<SegmentProbe>,
}

/// The explanation of one flag in one environment.
pub(super) struct Explainer {
    feature: ClientFeature,
    environment: String,
    /// The active strategies together, the flag switched on and its dependencies left
    /// out: what the strategies say.
    strategies: Probe,
    /// Whether any strategy is active (not disabled).
    any_active: bool,
    each: Vec<StrategyProbe>,
    /// The flag's environment variants.
    variants: Vec<crate::model::Variant>,
}

/// The explanation of a strategy for a context.
pub(super) struct StrategiesExplained {
    pub(super) result: Outcome,
    pub(super) data: Vec<PlaygroundStrategy>,
    /// The variants of the first enabled strategy that has any.
    pub(super) variants: Option<Vec<crate::model::Variant>>,
}

impl Explainer {
    /// The probes of `feature` (as the frontend API's document has it) whose stored
    /// strategies in the environment are `stored` (disabled ones included).
    pub(super) fn build(
        feature: &ClientFeature,
        environment: &str,
        stored: &[FeatureStrategy],
        variants: Vec<crate::model::Variant>,
        segments: &BTreeMap<i64, &Segment>,
    ) -> Result<Self> {
        let wire_segments = |ids: &[i64]| -> Result<Vec<WireSegment>> {
            ids.iter()
                .filter_map(|id| segments.get(id))
                .map(|s| {
                    Ok(WireSegment {
                        id: s.id as i32,
                        constraints: wire(&s.constraints)?,
                    })
                })
                .collect()
        };
        let mut ordered: Vec<&FeatureStrategy> = stored.iter().collect();
        ordered.sort_by_key(|s| s.sort_order.unwrap_or(0));
        let mut each = Vec::with_capacity(ordered.len());
        let mut active = Vec::new();
        let mut active_segments = Vec::new();
        for strategy in ordered {
            let wired = client_strategy(strategy)?;
            let own_segments = wire_segments(&strategy.segments)?;
            let custom = !KNOWN_STRATEGIES.contains(&strategy.name.as_str());
            let probe = if custom {
                let conditions = conditions(
                    wired.constraints.clone().unwrap_or_default(),
                    wired.segments.clone().unwrap_or_default(),
                );
                Probe::new(feature, vec![conditions], &own_segments)
            } else {
                Probe::new(feature, vec![wired.clone()], &own_segments)
            };
            if !strategy.is_disabled() {
                active.push(wired);
                active_segments.extend(own_segments.iter().cloned());
            }
            let constraints = strategy
                .constraints
                .iter()
                .map(|c| ConstraintProbe::new(feature, c))
                .collect::<Result<Vec<_>>>()?;
            let mut segment_probes = Vec::new();
            for id in &strategy.segments {
                let Some(segment) = segments.get(id) else {
                    continue;
                };
                let only = wire_segments(std::slice::from_ref(id))?;
                segment_probes.push(SegmentProbe {
                    id: *id,
                    name: segment.name.clone(),
                    probe: Probe::new(
                        feature,
                        vec![conditions(Vec::new(), vec![*id as i32])],
                        &only,
                    ),
                    constraints: segment
                        .constraints
                        .iter()
                        .map(|c| ConstraintProbe::new(feature, c))
                        .collect::<Result<Vec<_>>>()?,
                });
            }
            each.push(StrategyProbe {
                stored: strategy.clone(),
                probe,
                custom,
                constraints,
                segments: segment_probes,
            });
        }
        active_segments.sort_by_key(|s| s.id);
        active_segments.dedup_by_key(|s| s.id);
        Ok(Self {
            any_active: !active.is_empty(),
            strategies: Probe::new(feature, active, &active_segments),
            feature: feature.clone(),
            environment: environment.to_owned(),
            each,
            variants,
        })
    }

    /// The flag's name.
    pub(super) fn name(&self) -> &str {
        &self.feature.name
    }

    /// The flag's project.
    pub(super) fn project(&self) -> &str {
        self.feature.project.as_deref().unwrap_or("default")
    }

    /// Whether the flag is switched on in the environment.
    pub(super) fn enabled_in_environment(&self) -> bool {
        self.feature.enabled
    }

    /// The flag's environment variants.
    pub(super) fn variants(&self) -> &[crate::model::Variant] {
        &self.variants
    }

    /// Each strategy's result for `context`, and theirs together.
    pub(super) fn explain(&self, context: &Context) -> StrategiesExplained {
        let mut data = Vec::with_capacity(self.each.len());
        let mut variants = None;
        let mut first_enabled_seen = false;
        let mut unknown = false;
        for strategy in &self.each {
            let holds = strategy.probe.holds(context);
            let disabled = strategy.stored.is_disabled();
            let result = if disabled {
                // Never evaluated, so it cannot enable the flag (Unleash writes `unknown`,
                // which would make the flag's result `unknown` where SDKs see it decided).
                StrategyResult {
                    enabled: Outcome::Decided(false),
                    evaluation_status: EvaluationStatus::Unevaluated,
                    variant: None,
                    variants: None,
                }
            } else if strategy.custom {
                unknown |= holds;
                StrategyResult {
                    enabled: if holds {
                        Outcome::Unknown
                    } else {
                        Outcome::Decided(false)
                    },
                    evaluation_status: EvaluationStatus::Incomplete,
                    variant: None,
                    variants: None,
                }
            } else {
                let variant = if holds && !strategy.stored.variants.is_empty() {
                    strategy.probe.variant(context)
                } else {
                    None
                };
                let strategy_variants = variant.as_ref().map(|_| strategy.stored.variants.clone());
                // The first enabled strategy decides the variants, as in the engine: its own
                // if it has any, else the environment's.
                if holds && !first_enabled_seen {
                    first_enabled_seen = true;
                    variants = strategy_variants
                        .as_ref()
                        .map(|list| list.iter().map(as_variant).collect());
                }
                StrategyResult {
                    enabled: Outcome::Decided(holds),
                    evaluation_status: EvaluationStatus::Complete,
                    variant,
                    variants: strategy_variants,
                }
            };
            let id = strategy
                .stored
                .id
                .clone()
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            data.push(PlaygroundStrategy {
                name: strategy.stored.name.clone(),
                links: StrategyLinks {
                    edit: format!(
                        "/projects/{}/features/{}/strategies/edit?environmentId={}&strategyId={}",
                        self.project(),
                        self.feature.name,
                        self.environment,
                        id
                    ),
                },
                id,
                title: strategy.stored.title.clone().flatten(),
                disabled,
                parameters: strategy.stored.parameters.clone(),
                result,
                constraints: strategy
                    .constraints
                    .iter()
                    .map(|c| c.explain(context))
                    .collect(),
                segments: strategy
                    .segments
                    .iter()
                    .map(|s| PlaygroundSegment {
                        id: s.id,
                        name: s.name.clone(),
                        result: s.probe.holds(context),
                        constraints: s.constraints.iter().map(|c| c.explain(context)).collect(),
                    })
                    .collect(),
            });
        }
        let result = if !self.any_active {
            // Without a strategy to ask, a flag is what its switch says (as in Unleash's
            // playground; an SDK sees it so).
            Outcome::Decided(self.feature.enabled)
        } else if self.strategies.holds(context) {
            Outcome::Decided(true)
        } else if unknown {
            Outcome::Unknown
        } else {
            Outcome::Decided(false)
        };
        StrategiesExplained {
            result,
            data,
            variants,
        }
    }
}

/// A strategy variant in the shape of the `variants` list.
fn as_variant(variant: &crate::model::StrategyVariant) -> crate::model::Variant {
    crate::model::Variant {
        name: variant.name.clone(),
        weight: variant.weight,
        weight_type: Some(variant.weight_type),
        stickiness: Some(variant.stickiness.clone()),
        payload: variant.payload.clone(),
        overrides: None,
    }
}

/// Whether each flag's parents give what it needs, asked of the engine: for each flag with
/// parents, a twin that is switched on, has no strategy and the same parents, so the twin is
/// enabled exactly when the dependencies are satisfied.
pub(super) struct DependencyProbe {
    state: Option<EngineState>,
    twins: HashMap<String, String>,
}

impl DependencyProbe {
    /// The probe of `flags` of `document`. The engine is given their twins and the flags
    /// they depend on (and those flags' parents, though the engine refuses a parent that has
    /// parents), not the whole document: a twin's answer reads nothing else, and a page of
    /// the playground then compiles its own few flags, not all of them.
    pub(super) fn build<'n>(
        document: &ClientFeatures,
        flags: impl IntoIterator<Item = &'n str>,
    ) -> Self {
        let wanted: HashSet<&str> = flags.into_iter().collect();
        let children: Vec<&ClientFeature> = document
            .features
            .iter()
            .filter(|f| f.dependencies.as_ref().is_some_and(|d| !d.is_empty()))
            .filter(|f| wanted.contains(f.name.as_str()))
            .collect();
        let mut twins = HashMap::new();
        if children.is_empty() {
            return Self { state: None, twins };
        }
        let by_name: HashMap<&str, &ClientFeature> = document
            .features
            .iter()
            .map(|f| (f.name.as_str(), f))
            .collect();
        let mut features = Vec::new();
        let mut parents: Vec<&str> = Vec::new();
        for feature in children {
            // No flag name holds a NUL (the stores refuse it), so no twin meets a flag.
            let twin = format!("\u{0}dependencies\u{0}{}", feature.name);
            features.push(ClientFeature {
                name: twin.clone(),
                enabled: true,
                strategies: Some(Vec::new()),
                variants: None,
                ..feature.clone()
            });
            twins.insert(feature.name.clone(), twin);
            parents.extend(
                feature
                    .dependencies
                    .iter()
                    .flatten()
                    .map(|d| d.feature.as_str()),
            );
        }
        let mut given: HashSet<&str> = HashSet::new();
        while let Some(parent) = parents.pop() {
            // A parent missing from the document stays missing: the twin is then off.
            if let Some(found) = by_name.get(parent).filter(|_| given.insert(parent)) {
                features.push((*found).clone());
                parents.extend(
                    found
                        .dependencies
                        .iter()
                        .flatten()
                        .map(|d| d.feature.as_str()),
                );
            }
        }
        let state = EngineState::initial_state(Utc::now());
        let _ = state.take_state(UpdateMessage::FullResponse(ClientFeatures {
            version: document.version,
            features,
            segments: document.segments.clone(),
            query: document.query.clone(),
            meta: document.meta.clone(),
        }));
        Self {
            state: Some(state),
            twins,
        }
    }

    /// True when `feature` has parents and they do not give what it needs for `context`.
    pub(super) fn unsatisfied(&self, feature: &str, context: &Context) -> bool {
        match (&self.state, self.twins.get(feature)) {
            (Some(state), Some(twin)) => !state.is_enabled(twin, context, &None),
            _ => false,
        }
    }
}
