//! The permission matrix: the operations × who calls them, each cell on a fresh store,
//! with the 403 naming the missing permission and 401 for a revoked key.
//!
//! Project "A" is `p` (feature `f`), project "B" is `other` (feature `g`); see `common`.

use serde_json::json;
use test_support::access::{add_blue, config, role, user_with_key};
use test_support::facade::{all_events, setup};
use toggle_admin::Error;
use toggle_admin::access::{MEMBER_ROLE, OWNER_ROLE};
use toggle_admin::model::NewGroup;
use toggle_admin::model::ProjectAccessConfiguration;

/// The callers of the matrix, each on a fresh store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Admin,
    Editor,
    Viewer,
    MemberInA,
    MemberInB,
    OwnerInA,
    Revoked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    PatchVariants,
    ImportToggles,
    DeleteApplication,
    SetProjectAccess,
}

/// Expected outcome: `Ok(())`, or the status and the permission the 403 must name.
fn expected(op: Op, who: Who) -> Result<(), (u16, Option<&'static str>)> {
    use Op::*;
    use Who::*;
    const VARIANTS: &str = "UPDATE_FEATURE_ENVIRONMENT_VARIANTS";
    const CREATE_FEATURE: &str = "CREATE_FEATURE";
    const APPLICATION: &str = "UPDATE_APPLICATION";
    const USER_ACCESS: &str = "PROJECT_USER_ACCESS_WRITE";
    match (op, who) {
        (_, Revoked) => Err((401, None)),
        (_, Admin) => Ok(()),
        (PatchVariants, Editor | MemberInA | OwnerInA) => Ok(()),
        (PatchVariants, Viewer | MemberInB) => Err((403, Some(VARIANTS))),
        (ImportToggles, Editor | MemberInA | OwnerInA) => Ok(()),
        (ImportToggles, Viewer | MemberInB) => Err((403, Some(CREATE_FEATURE))),
        (DeleteApplication, Editor) => Ok(()),
        (DeleteApplication, _) => Err((403, Some(APPLICATION))),
        (SetProjectAccess, OwnerInA) => Ok(()),
        (SetProjectAccess, _) => Err((403, Some(USER_ACCESS))),
    }
}

/// Run `op` as `who` on a fresh store: A has group G (holding the member) as Member and the
/// owner as Owner.
async fn run(op: Op, who: Who) -> Result<(), Error> {
    let (admin, root) = setup().await;
    let (editor_id, editor) = user_with_key(&admin, &root, "editor", 2).await;
    let (_, viewer) = user_with_key(&admin, &root, "viewer", 3).await;
    let (member_id, member) = user_with_key(&admin, &root, "member", 3).await;
    let (owner_id, owner) = user_with_key(&admin, &root, "owner", 3).await;
    let (_, revoked) = user_with_key(&admin, &root, "gone", 1).await;
    admin.revoke_api_key(&root, revoked.key().id).await.unwrap();
    let group = admin
        .create_group(
            &root,
            &NewGroup {
                name: "G".into(),
                users: vec![member_id],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let initial = config(vec![
        role(OWNER_ROLE, &[], &[owner_id]),
        role(MEMBER_ROLE, &[group.id], &[]),
    ]);
    admin
        .set_project_access(&root, "p", &initial)
        .await
        .unwrap();
    admin
        .register_application(
            &root,
            &serde_json::from_value(json!({"name": "app", "instances": [{"instanceId": "i1"}]}))
                .unwrap(),
        )
        .await
        .unwrap();
    let (caller, project, feature) = match who {
        Who::Admin => (&root, "p", "f"),
        Who::Editor => (&editor, "p", "f"),
        Who::Viewer => (&viewer, "p", "f"),
        Who::MemberInA => (&member, "p", "f"),
        Who::MemberInB => (&member, "other", "g"),
        Who::OwnerInA => (&owner, "p", "f"),
        Who::Revoked => (&revoked, "p", "f"),
    };
    let events_before = all_events(&admin, &root).await.len();
    let result = match op {
        Op::PatchVariants => admin
            .patch_variants(caller, project, feature, "production", &add_blue())
            .await
            .map(|_| ()),
        Op::ImportToggles => {
            // A new feature into the caller's project: UPDATE_FEATURE and CREATE_FEATURE.
            let body = json!({
                "project": project,
                "environment": "production",
                "data": {
                    "features": [{"name": "imported", "type": "release"}],
                    "featureStrategies": [],
                    "tagTypes": []
                }
            });
            admin.import_toggles_json(caller, &body).await.map(|_| ())
        }
        Op::DeleteApplication => admin.delete_application(caller, "app").await,
        Op::SetProjectAccess => {
            // Give the editor Member directly: a change of user assignments.
            let mut wanted = initial.clone();
            wanted.roles[1].users.push(editor_id);
            admin.set_project_access(caller, project, &wanted).await
        }
    };
    if result.is_err() {
        // A refused operation changes nothing and records nothing.
        assert_eq!(all_events(&admin, &root).await.len(), events_before);
        assert_eq!(
            admin.project_access(&root, "p").await.unwrap(),
            ProjectAccessConfiguration {
                roles: vec![
                    role(OWNER_ROLE, &[], &[owner_id]),
                    role(MEMBER_ROLE, &[group.id], &[]),
                ]
            }
        );
        assert!(admin.application(&root, "app").await.is_ok());
        assert!(admin.feature(&root, project, "imported").await.is_err());
        assert!(
            admin
                .variants(&root, project, feature, "production")
                .await
                .unwrap()
                .variants
                .is_empty()
        );
    }
    result
}

#[tokio::test]
async fn permission_matrix() {
    let ops = [
        Op::PatchVariants,
        Op::ImportToggles,
        Op::DeleteApplication,
        Op::SetProjectAccess,
    ];
    let whos = [
        Who::Admin,
        Who::Editor,
        Who::Viewer,
        Who::MemberInA,
        Who::MemberInB,
        Who::OwnerInA,
        Who::Revoked,
    ];
    for op in ops {
        for who in whos {
            let got = run(op, who).await;
            match (expected(op, who), got) {
                (Ok(()), Ok(())) => {}
                (Err((status, permission)), Err(err)) => {
                    assert_eq!(err.status(), status, "{op:?} as {who:?}: {err}");
                    if let Some(permission) = permission {
                        let body = err.body();
                        assert_eq!(body.name, "NoAccessError");
                        assert!(
                            body.message.contains(permission),
                            "{op:?} as {who:?}: {}",
                            body.message
                        );
                        assert!(
                            body.details.iter().any(|d| d.message.contains(permission)),
                            "{op:?} as {who:?}: {body:?}"
                        );
                    }
                }
                (want, got) => panic!("{op:?} as {who:?}: expected {want:?}, got {got:?}"),
            }
        }
    }
}
