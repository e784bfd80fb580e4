//! The reference model of the differential test: what each operation should do to the
//! variants, features, access and applications, and whether it succeeds.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

// ---------------------------------------------------------------- the reference model

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelVariant {
    pub(crate) name: String,
    pub(crate) fix: bool,
    pub(crate) weight: u32,
}

/// What the model expects of the event log: one event of a type, or an import's events (any
/// number, ending with `features-imported`; none at all for an import that changes nothing).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expected {
    Event(&'static str),
    Import,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Model {
    /// Feature → archived.
    pub(crate) features: BTreeMap<String, bool>,
    /// (feature, env) → variants, sorted by name.
    pub(crate) variants: BTreeMap<(String, String), Vec<ModelVariant>>,
    pub(crate) access: ProjectAccessConfiguration,
    /// Application → description.
    pub(crate) apps: BTreeMap<String, Option<String>>,
    pub(crate) events: Vec<Expected>,
    pub(crate) users: Vec<i64>,
}

pub(crate) fn distribute(list: &mut [ModelVariant]) -> bool {
    if list.is_empty() {
        return true;
    }
    let variable = list.iter().filter(|v| !v.fix).count() as u32;
    let fixed: u32 = list.iter().filter(|v| v.fix).map(|v| v.weight).sum();
    if variable == 0 || fixed > 1000 {
        return false;
    }
    let rest = 1000 - fixed;
    for (i, v) in list.iter_mut().filter(|v| !v.fix).enumerate() {
        v.weight = rest / variable + u32::from((i as u32) < rest % variable);
    }
    true
}

impl Model {
    /// Apply `op`; whether it should succeed.
    pub(crate) fn apply(&mut self, op: &Op) -> bool {
        match op {
            Op::Patch { feature, env, ops } => {
                let (feature, env) = (FEATURES[*feature], ENVS[*env]);
                if self.features.get(feature) != Some(&false) {
                    return false;
                }
                let key = (feature.to_owned(), env.to_owned());
                let mut list = self.variants.get(&key).cloned().unwrap_or_default();
                for op in ops {
                    match *op {
                        PatchOp::Add { name, fix, weight } => list.push(ModelVariant {
                            name: VARIANT_NAMES[name].to_owned(),
                            fix,
                            weight,
                        }),
                        PatchOp::Remove { index } if index < list.len() => {
                            list.remove(index);
                        }
                        PatchOp::ReplaceWeight { index, weight } if index < list.len() => {
                            list[index].weight = weight;
                        }
                        PatchOp::MakeFix { index, weight } if index < list.len() => {
                            list[index].fix = true;
                            list[index].weight = weight;
                        }
                        _ => return false,
                    }
                }
                let names: BTreeSet<&str> = list.iter().map(|v| v.name.as_str()).collect();
                // A weight is 0 to 1000, whatever the weight type.
                if names.len() != list.len()
                    || list.iter().any(|v| v.weight > 1000)
                    || !distribute(&mut list)
                {
                    return false;
                }
                list.sort_by(|a, b| a.name.cmp(&b.name));
                self.variants.insert(key, list);
                self.events
                    .push(Expected::Event("feature-environment-variants-updated"));
                true
            }
            Op::Import {
                features, invalid, ..
            } => {
                if *invalid {
                    return false;
                }
                // The document gives the features only their names: one that exists is already
                // as described (or archived, and skipped), so only a new one is written; an import
                // that changes nothing writes no event.
                let creates = features
                    .iter()
                    .any(|&f| !self.features.contains_key(FEATURES[f]));
                for &f in features {
                    self.features.entry(FEATURES[f].to_owned()).or_insert(false);
                }
                if creates {
                    self.events.push(Expected::Import);
                }
                true
            }
            Op::SetAccess { roles } => {
                let config = access_config(roles, &self.users);
                let ids: BTreeSet<i64> = config.roles.iter().map(|r| r.id).collect();
                let valid = ids.len() == config.roles.len()
                    && config.roles.iter().all(|r| {
                        (r.id == 4 || r.id == 5) && r.users.iter().all(|u| self.users.contains(u))
                    });
                if !valid {
                    return false;
                }
                let mut new = config;
                for role in &mut new.roles {
                    role.users.sort_unstable();
                    role.users.dedup();
                }
                new.roles.sort_by_key(|r| r.id);
                if new != self.access {
                    self.access = new;
                    self.events.push(Expected::Event("project-access-updated"));
                }
                true
            }
            Op::Register { app, description } => {
                let name = APPS[*app];
                if name.trim().is_empty() || name.chars().any(char::is_control) {
                    return false;
                }
                let description = description.map(|d| format!("d{d}"));
                match self.apps.get(name) {
                    None => {
                        self.apps.insert(name.to_owned(), description);
                        self.events.push(Expected::Event("application-created"));
                    }
                    Some(old) => {
                        let merged = description.or_else(|| old.clone());
                        if &merged != old {
                            self.apps.insert(name.to_owned(), merged);
                            self.events.push(Expected::Event("application-updated"));
                        }
                    }
                }
                true
            }
            Op::DeleteApp { app } => {
                let name = APPS[*app];
                if name.trim().is_empty() || name.chars().any(char::is_control) {
                    return false;
                }
                if self.apps.remove(name).is_some() {
                    self.events.push(Expected::Event("application-deleted"));
                }
                true
            }
            Op::Archive { feature } => match self.features.get_mut(FEATURES[*feature]) {
                None => false,
                Some(true) => true,
                Some(archived) => {
                    *archived = true;
                    self.events.push(Expected::Event("feature-archived"));
                    true
                }
            },
        }
    }
}
