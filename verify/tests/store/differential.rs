//! Differential property test: random sequences of operations — variant patches
//! (valid and not), imports of small documents, project access changes, application
//! registrations and deletions, archiving — applied to a MemoryStore-backed, a
//! FileStore-backed (compacting within the sequence) and, when `TOGGLE_ADMIN_TEST_POSTGRES`
//! is set, a PostgresStore-backed `ToggleAdmin`, and to a reference model written here.
//! After every operation every store must agree with the model on success or failure and
//! answer exactly as the others do (the returned value, or the error's kind, message and
//! details); a failure must change nothing (state and event count); and at the end the
//! observable state (export of each environment, variants, project access, applications,
//! the event log's types in order) must be identical in every store and agree with the
//! model — also after reopening the FileStore.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};
use test_support::store::TempDir;
use toggle_admin::model::{
    Application, Environment, Project, ProjectAccessConfiguration, RoleAccess,
};
use toggle_admin::model::{NewFeature, NewUser};
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
mod model;
use model::*;

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
        .bootstrap_admin_key_with_secret("prop", "differential-secret-0123456789-abcdef")
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

/// What an operation answered: the value it returned (scrubbed of ids and times), or its
/// error's kind (its `name`), message and details.
type Outcome = Result<Value, (String, String, Value)>;

fn outcome<T: serde::Serialize>(result: toggle_admin::Result<T>) -> Outcome {
    match result {
        Ok(value) => {
            let mut value = serde_json::to_value(value).unwrap();
            scrub(&mut value);
            Ok(value)
        }
        Err(error) => {
            let body = error.body();
            Err((
                error.name().to_owned(),
                body.message.clone(),
                serde_json::to_value(&body.details).unwrap(),
            ))
        }
    }
}

async fn run(admin: &ToggleAdmin, caller: &Caller, users: &[i64], op: &Op) -> Outcome {
    match op {
        Op::Patch { feature, env, ops } => {
            let patch = serde_json::from_value(patch_json(ops)).unwrap();
            outcome(
                admin
                    .patch_variants(caller, "p", FEATURES[*feature], ENVS[*env], &patch)
                    .await,
            )
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
            outcome(admin.import_toggles_json(caller, &body).await)
        }
        Op::SetAccess { roles } => outcome(
            admin
                .set_project_access(caller, "p", &access_config(roles, users))
                .await,
        ),
        Op::Register { app, description } => outcome(
            admin
                .register_application(
                    caller,
                    &Application {
                        name: APPS[*app].into(),
                        description: description.map(|d| format!("d{d}")),
                        ..Default::default()
                    },
                )
                .await,
        ),
        Op::DeleteApp { app } => outcome(admin.delete_application(caller, APPS[*app]).await),
        Op::Archive { feature } => {
            outcome(admin.archive_feature(caller, "p", FEATURES[*feature]).await)
        }
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

/// A store under test, with its admin caller.
struct Backend {
    name: &'static str,
    admin: ToggleAdmin,
    caller: Caller,
}

/// The PostgreSQL store of one scenario (when `TOGGLE_ADMIN_TEST_POSTGRES` is set), in a
/// schema of its own, dropped with it.
#[cfg(feature = "postgres")]
async fn postgres() -> Option<(test_support::postgres::TestSchema, ToggleAdmin)> {
    let url = std::env::var(test_support::postgres::URL_VAR)
        .ok()
        .filter(|u| !u.is_empty())?;
    let schema = test_support::postgres::TestSchema::new(&url);
    let store = schema.connect(2).await;
    Some((schema, ToggleAdmin::new(store)))
}

fn scenario(ops: Vec<Op>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = TempDir::new("differential");
        // Compacting after every few hundred bytes: compactions happen within the sequence.
        let open = || {
            FileStore::builder(dir.path())
                .durable(false)
                .compact_after_bytes(512)
                .open()
                .unwrap()
        };
        let mut admins = vec![
            ("MemoryStore", ToggleAdmin::new(MemoryStore::new())),
            ("FileStore", ToggleAdmin::new(open())),
        ];
        #[cfg(feature = "postgres")]
        let _schema = match postgres().await {
            Some((schema, admin)) => {
                admins.push(("PostgresStore", admin));
                Some(schema)
            }
            None => None,
        };
        let mut backends = Vec::new();
        let mut users = None;
        for (name, admin) in admins {
            let (caller, ids) = setup(&admin).await;
            assert_eq!(users.get_or_insert_with(|| ids.clone()), &ids, "{name}");
            backends.push(Backend {
                name,
                admin,
                caller,
            });
        }
        let users = users.unwrap();
        let reference = &backends[0];
        let setup_events = event_types(&reference.admin, &reference.caller).await.len();
        let mut model = Model {
            users: users.clone(),
            features: [("f".to_owned(), false), ("g".to_owned(), false)].into(),
            ..Default::default()
        };
        for op in &ops {
            let expected = model.apply(op);
            let mut first: Option<Outcome> = None;
            for backend in &backends {
                let before = observe(&backend.admin, &backend.caller).await;
                let got = run(&backend.admin, &backend.caller, &users, op).await;
                assert_eq!(
                    got.is_ok(),
                    expected,
                    "{} vs model on {op:?}: {got:?}",
                    backend.name
                );
                // The same answer from every store: the value, or the error's kind, message
                // and details.
                match &first {
                    None => first = Some(got.clone()),
                    Some(reference) => assert_eq!(
                        &got, reference,
                        "{} vs {} on {op:?}",
                        backend.name, backends[0].name
                    ),
                }
                if !expected {
                    assert_eq!(
                        observe(&backend.admin, &backend.caller).await,
                        before,
                        "a failed {op:?} changed the {}",
                        backend.name
                    );
                }
            }
        }
        let state = observe(&reference.admin, &reference.caller).await;
        for backend in &backends {
            assert_eq!(
                observe(&backend.admin, &backend.caller).await,
                state,
                "{} vs {}",
                backend.name,
                reference.name
            );
            check_model(&backend.admin, &backend.caller, &model, setup_events).await;
        }
        let file = backends.remove(1);
        assert_eq!(file.name, "FileStore");
        drop(file);
        let reopened = ToggleAdmin::new(open());
        let caller_r = reopened
            .authenticate(Some("differential-secret-0123456789-abcdef"))
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
    fn stores_and_model_agree(ops in prop::collection::vec(op(), 1..20)) {
        scenario(ops);
    }
}
