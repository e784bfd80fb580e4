//! Differential property test (issue 9): random sequences of operations — variant patches
//! (valid and not), imports of small documents, project access changes, application
//! registrations and deletions, archiving — applied to a MemoryStore-backed and a
//! FileStore-backed `ToggleAdmin` and to a reference model written here. After every operation
//! both stores must agree with the model on success or failure, a failure must change nothing
//! (state and event count), and at the end the observable state (export of each environment,
//! variants, project access, applications, the event log's types in order) must be identical
//! in both stores and agree with the model — also after reopening the FileStore.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::{Value, json};
use support::store::TempDir;
use toggle_admin::admin::{NewFeature, NewUser};
use toggle_admin::model::{
    Application, Environment, Project, ProjectAccessConfiguration, RoleAccess,
};
use toggle_admin::store::FileStore;
use toggle_admin::{Caller, MemoryStore, ToggleAdmin};

const FEATURES: [&str; 3] = ["f", "g", "h"];
const ENVS: [&str; 2] = ["production", "development"];
const VARIANT_NAMES: [&str; 3] = ["a", "b", "c"];
const APPS: [&str; 4] = ["app1", "app2", "", "bad\u{1}name"];
const ROLES: [i64; 4] = [4, 5, 1, 99];

#[derive(Debug, Clone)]
enum PatchOp {
    Add { name: usize, fix: bool, weight: u32 },
    Remove { index: usize },
    ReplaceWeight { index: usize, weight: u32 },
    MakeFix { index: usize, weight: u32 },
}

#[derive(Debug, Clone)]
enum Op {
    Patch {
        feature: usize,
        env: usize,
        ops: Vec<PatchOp>,
    },
    Import {
        env: usize,
        features: Vec<usize>,
        invalid: bool,
    },
    SetAccess {
        roles: Vec<(usize, Vec<usize>)>,
    },
    Register {
        app: usize,
        description: Option<usize>,
    },
    DeleteApp {
        app: usize,
    },
    Archive {
        feature: usize,
    },
}

fn patch_op() -> impl Strategy<Value = PatchOp> {
    prop_oneof![
        (0..3usize, any::<bool>(), 0..1200u32).prop_map(|(name, fix, weight)| PatchOp::Add {
            name,
            fix,
            weight
        }),
        (0..4usize).prop_map(|index| PatchOp::Remove { index }),
        (0..4usize, 0..1200u32)
            .prop_map(|(index, weight)| PatchOp::ReplaceWeight { index, weight }),
        (0..4usize, 0..700u32).prop_map(|(index, weight)| PatchOp::MakeFix { index, weight }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, 0..2usize, prop::collection::vec(patch_op(), 1..4))
            .prop_map(|(feature, env, ops)| Op::Patch { feature, env, ops }),
        2 => (0..2usize, prop::collection::btree_set(0..3usize, 1..3), prop::bool::weighted(0.2))
            .prop_map(|(env, features, invalid)| Op::Import {
                env,
                features: features.into_iter().collect(),
                invalid,
            }),
        2 => prop::collection::vec((0..4usize, prop::collection::vec(0..3usize, 0..3)), 0..3)
            .prop_map(|roles| Op::SetAccess { roles }),
        2 => (0..4usize, prop::option::of(0..2usize))
            .prop_map(|(app, description)| Op::Register { app, description }),
        1 => (0..4usize).prop_map(|app| Op::DeleteApp { app }),
        1 => (0..3usize).prop_map(|feature| Op::Archive { feature }),
    ]
}

// ---------------------------------------------------------------- the reference model

#[derive(Debug, Clone, PartialEq)]
struct ModelVariant {
    name: String,
    fix: bool,
    weight: u32,
}

/// What the model expects of the event log: one event of a type, or an import's events (any
/// number, ending with `features-imported`).
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    Event(&'static str),
    Import,
}

#[derive(Debug, Clone, Default)]
struct Model {
    /// Feature → archived.
    features: BTreeMap<String, bool>,
    /// (feature, env) → variants, sorted by name.
    variants: BTreeMap<(String, String), Vec<ModelVariant>>,
    access: ProjectAccessConfiguration,
    /// Application → description.
    apps: BTreeMap<String, Option<String>>,
    events: Vec<Expected>,
    users: Vec<i64>,
}

fn distribute(list: &mut [ModelVariant]) -> bool {
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
    fn apply(&mut self, op: &Op) -> bool {
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
                for &f in features {
                    self.features.entry(FEATURES[f].to_owned()).or_insert(false);
                }
                self.events.push(Expected::Import);
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

fn access_config(roles: &[(usize, Vec<usize>)], users: &[i64]) -> ProjectAccessConfiguration {
    ProjectAccessConfiguration {
        roles: roles
            .iter()
            .map(|(role, members)| RoleAccess {
                id: ROLES[*role],
                groups: Vec::new(),
                users: members
                    .iter()
                    .map(|&m| users.get(m).copied().unwrap_or(999))
                    .collect(),
            })
            .collect(),
    }
}

// ---------------------------------------------------------------- the real thing

async fn setup(admin: &ToggleAdmin) -> (Caller, Vec<i64>) {
    let key = admin
        .bootstrap_admin_key_with_secret("prop", "differential-secret-0123456789")
        .await
        .unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    for env in ENVS {
        admin
            .create_environment(
                &caller,
                &Environment {
                    name: env.into(),
                    environment_type: env.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    admin
        .create_project(
            &caller,
            &Project {
                id: "p".into(),
                name: "P".into(),
                environments: ENVS.iter().map(|e| e.to_string()).collect(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    for name in ["f", "g"] {
        admin
            .create_feature(
                &caller,
                "p",
                &NewFeature {
                    name: name.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    let mut users = Vec::new();
    for name in ["u1", "u2"] {
        let user = admin
            .create_user(
                &caller,
                &NewUser {
                    username: Some(name.into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        users.push(user.id);
    }
    (caller, users)
}

fn patch_json(ops: &[PatchOp]) -> Value {
    Value::Array(
        ops.iter()
            .map(|op| match *op {
                PatchOp::Add { name, fix, weight } => json!({"op": "add", "path": "/-", "value": {
                    "name": VARIANT_NAMES[name],
                    "weightType": if fix { "fix" } else { "variable" },
                    "weight": weight,
                }}),
                PatchOp::Remove { index } => json!({"op": "remove", "path": format!("/{index}")}),
                PatchOp::ReplaceWeight { index, weight } => {
                    json!({"op": "replace", "path": format!("/{index}/weight"), "value": weight})
                }
                PatchOp::MakeFix { index, weight } => json!([
                    {"op": "replace", "path": format!("/{index}/weightType"), "value": "fix"},
                    {"op": "replace", "path": format!("/{index}/weight"), "value": weight},
                ]),
            })
            .flat_map(|v| match v {
                Value::Array(items) => items,
                one => vec![one],
            })
            .collect(),
    )
}

async fn run(admin: &ToggleAdmin, caller: &Caller, users: &[i64], op: &Op) -> bool {
    match op {
        Op::Patch { feature, env, ops } => {
            let patch = serde_json::from_value(patch_json(ops)).unwrap();
            admin
                .patch_variants(caller, "p", FEATURES[*feature], ENVS[*env], &patch)
                .await
                .is_ok()
        }
        Op::Import {
            env,
            features,
            invalid,
        } => {
            let mut names: Vec<Value> = features
                .iter()
                .map(|&f| json!({"name": FEATURES[f]}))
                .collect();
            if *invalid {
                names.push(json!({"name": ""}));
            }
            let body = json!({"project": "p", "environment": ENVS[*env], "data": {
                "features": names, "featureStrategies": [], "tagTypes": []}});
            admin.import_toggles_json(caller, &body).await.is_ok()
        }
        Op::SetAccess { roles } => admin
            .set_project_access(caller, "p", &access_config(roles, users))
            .await
            .is_ok(),
        Op::Register { app, description } => admin
            .register_application(
                caller,
                &Application {
                    name: APPS[*app].into(),
                    description: description.map(|d| format!("d{d}")),
                    ..Default::default()
                },
            )
            .await
            .is_ok(),
        Op::DeleteApp { app } => admin.delete_application(caller, APPS[*app]).await.is_ok(),
        Op::Archive { feature } => admin
            .archive_feature(caller, "p", FEATURES[*feature])
            .await
            .is_ok(),
    }
}

/// Timestamps and generated ids differ between two stores by nature: blank them.
fn scrub(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !k.ends_with("At") && k != "lastSeen");
            map.values_mut().for_each(scrub);
        }
        Value::Array(items) => items.iter_mut().for_each(scrub),
        Value::String(s) if uuid::Uuid::parse_str(s).is_ok() => *s = "<uuid>".into(),
        _ => {}
    }
}

/// Everything observable, as JSON.
async fn observe(admin: &ToggleAdmin, caller: &Caller) -> Value {
    let mut out = serde_json::Map::new();
    for env in ENVS {
        let export = admin.export(caller, "p", env, &[]).await.unwrap();
        out.insert(
            format!("export/{env}"),
            serde_json::to_value(&export).unwrap(),
        );
        for feature in FEATURES {
            if let Ok(v) = admin.variants(caller, "p", feature, env).await {
                out.insert(
                    format!("variants/{feature}/{env}"),
                    serde_json::to_value(&v).unwrap(),
                );
            }
        }
    }
    out.insert(
        "access".into(),
        serde_json::to_value(admin.project_access(caller, "p").await.unwrap()).unwrap(),
    );
    out.insert(
        "applications".into(),
        serde_json::to_value(admin.applications(caller).await.unwrap()).unwrap(),
    );
    let events = admin.events(caller, 0, usize::MAX).await.unwrap();
    out.insert(
        "events".into(),
        events
            .iter()
            .map(|e| Value::from(e.event.event_type.clone()))
            .collect(),
    );
    let mut value = Value::Object(out);
    scrub(&mut value);
    value
}

async fn event_types(admin: &ToggleAdmin, caller: &Caller) -> Vec<String> {
    admin
        .events(caller, 0, usize::MAX)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event.event_type)
        .collect()
}

/// The store agrees with the model: live features, variants, access, applications, events.
async fn check_model(admin: &ToggleAdmin, caller: &Caller, model: &Model, setup_events: usize) {
    for (name, archived) in &model.features {
        // An archived feature is read from the archive, as in Unleash.
        match admin.feature(caller, "p", name).await {
            Ok(feature) => assert!(!archived && feature.archived == Some(false), "{name}"),
            Err(err) => assert!(*archived && err.status() == 404, "{name}: {err}"),
        }
        let in_archive = admin
            .archived_features(caller, "p")
            .await
            .unwrap()
            .features
            .iter()
            .any(|f| f.name == *name);
        assert_eq!(in_archive, *archived, "{name}");
    }
    for env in ENVS {
        let export = admin.export(caller, "p", env, &[]).await.unwrap();
        let exported: Vec<&str> = export.features.iter().map(|f| f.name.as_str()).collect();
        let live: Vec<&str> = model
            .features
            .iter()
            .filter(|(_, archived)| !**archived)
            .map(|(name, _)| name.as_str())
            .collect();
        assert_eq!(exported, live, "export of {env}");
        for name in &live {
            let got = admin.variants(caller, "p", name, env).await.unwrap();
            let got: Vec<ModelVariant> = got
                .variants
                .iter()
                .map(|v| ModelVariant {
                    name: v.name.clone(),
                    fix: v.weight_type == Some(toggle_admin::model::WeightType::Fix),
                    weight: v.weight,
                })
                .collect();
            let want = model
                .variants
                .get(&(name.to_string(), env.to_owned()))
                .cloned()
                .unwrap_or_default();
            assert_eq!(got, want, "variants of {name} in {env}");
        }
    }
    assert_eq!(
        admin.project_access(caller, "p").await.unwrap(),
        model.access
    );
    let apps: BTreeMap<String, Option<String>> = admin
        .applications(caller)
        .await
        .unwrap()
        .into_iter()
        .map(|a| (a.name, a.description))
        .collect();
    assert_eq!(apps, model.apps);
    let types = event_types(admin, caller).await;
    let mut rest = types[setup_events..].iter();
    for expected in &model.events {
        match expected {
            Expected::Event(t) => {
                assert_eq!(rest.next().map(String::as_str), Some(*t), "{types:?}")
            }
            Expected::Import => loop {
                match rest.next() {
                    Some(t) if t == "features-imported" => break,
                    Some(_) => {}
                    None => panic!("an import left no features-imported event: {types:?}"),
                }
            },
        }
    }
    assert_eq!(
        rest.next(),
        None,
        "events the model did not expect: {types:?}"
    );
}

fn scenario(ops: Vec<Op>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = TempDir::new("differential");
        let memory = ToggleAdmin::new(MemoryStore::new());
        let open = || {
            FileStore::builder(dir.path())
                .durable(false)
                .open()
                .unwrap()
        };
        let file = ToggleAdmin::new(open());
        let (caller_m, users) = setup(&memory).await;
        let (caller_f, users_f) = setup(&file).await;
        assert_eq!(users, users_f);
        let setup_events = event_types(&memory, &caller_m).await.len();
        let mut model = Model {
            users: users.clone(),
            features: [("f".to_owned(), false), ("g".to_owned(), false)].into(),
            ..Default::default()
        };
        for op in &ops {
            let before_m = observe(&memory, &caller_m).await;
            let before_f = observe(&file, &caller_f).await;
            let expected = model.apply(op);
            let ok_m = run(&memory, &caller_m, &users, op).await;
            let ok_f = run(&file, &caller_f, &users, op).await;
            assert_eq!(ok_m, expected, "MemoryStore vs model on {op:?}");
            assert_eq!(ok_f, expected, "FileStore vs model on {op:?}");
            if !expected {
                assert_eq!(
                    observe(&memory, &caller_m).await,
                    before_m,
                    "a failed {op:?} changed the MemoryStore"
                );
                assert_eq!(
                    observe(&file, &caller_f).await,
                    before_f,
                    "a failed {op:?} changed the FileStore"
                );
            }
        }
        let state = observe(&memory, &caller_m).await;
        assert_eq!(
            observe(&file, &caller_f).await,
            state,
            "MemoryStore vs FileStore"
        );
        check_model(&memory, &caller_m, &model, setup_events).await;
        check_model(&file, &caller_f, &model, setup_events).await;
        drop(file);
        let reopened = ToggleAdmin::new(open());
        let caller_r = reopened
            .authenticate(Some("differential-secret-0123456789"))
            .await
            .unwrap();
        assert_eq!(
            observe(&reopened, &caller_r).await,
            state,
            "the reopened FileStore"
        );
        check_model(&reopened, &caller_r, &model, setup_events).await;
    });
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    #[test]
    fn memory_file_and_model_agree(ops in prop::collection::vec(op(), 1..20)) {
        scenario(ops);
    }
}
