//! The state the recorded cases assume (the material's README, "The state the cases
//! assume") and the keys standing in for Unleash's callers.

use axum::Router;
use toggle_admin::model::NewUser;
use toggle_admin::model::{Environment, FeatureNaming, Project};
use toggle_admin::{KeyAccess, ToggleAdmin};

/// The secrets standing in for Unleash's callers.
pub struct Callers {
    admin: String,
    pat: String,
    viewer: String,
    client: String,
}

impl Callers {
    pub fn secret(&self, auth: &str) -> Option<String> {
        match auth {
            "admin" => Some(self.admin.clone()),
            "pat" => Some(self.pat.clone()),
            "viewer" => Some(self.viewer.clone()),
            "client" => Some(self.client.clone()),
            "bogus" => Some("bogus-key-nobody-has-0123456789".to_owned()),
            "none" => None,
            other => panic!("unknown caller {other}"),
        }
    }
}

/// The state the cases assume (the README's "The state the cases assume").
pub async fn world(admin: ToggleAdmin) -> (Router, Callers) {
    let key = admin.bootstrap_admin_key("bench-admin").await.unwrap();
    let root = admin.authenticate(Some(&key.secret)).await.unwrap();
    for (name, kind, enabled, order) in [
        ("default", "production", false, 1),
        ("development", "development", true, 2),
        ("production", "production", true, 3),
    ] {
        admin
            .create_environment(
                &root,
                &Environment {
                    name: name.into(),
                    environment_type: kind.into(),
                    enabled: Some(enabled),
                    sort_order: Some(order),
                },
            )
            .await
            .unwrap();
    }
    let both = vec!["development".to_owned(), "production".to_owned()];
    for project in [
        Project {
            id: "default".into(),
            name: "Default".into(),
            description: Some("Default project".into()),
            environments: both.clone(),
            ..Default::default()
        },
        Project {
            id: "other".into(),
            name: "Other".into(),
            environments: both.clone(),
            ..Default::default()
        },
        Project {
            id: "patterned".into(),
            name: "Patterned".into(),
            environments: both.clone(),
            feature_naming: Some(FeatureNaming {
                pattern: "^pat-[a-z0-9-]+$".into(),
                example: Some("pat-example".into()),
                description: Some("must start with pat-".into()),
            }),
            feature_limit: Some(3),
            ..Default::default()
        },
    ] {
        admin.create_project(&root, &project).await.unwrap();
    }
    // Unleash's root Admin user is user 1, `admin` (a username, no email); the Viewer is user
    // 2, made by the recorder with an email and a name. Each holds a personal access token
    // `recorder` that expires in 30 days; `client` is a client token for default:development.
    let month = chrono::Utc::now() + chrono::TimeDelta::days(30);
    let user_key = async |user: NewUser| {
        let user = admin.create_user(&root, &user).await.unwrap();
        let access = KeyAccess::User { user_id: user.id };
        admin
            .create_api_key_expiring(&root, "recorder", access, Some(month))
            .await
            .unwrap()
            .secret
    };
    let pat = user_key(NewUser {
        username: Some("admin".into()),
        root_role: Some(1),
        ..Default::default()
    })
    .await;
    let viewer = user_key(NewUser {
        email: Some("viewer@example.com".into()),
        name: Some("Viewer".into()),
        root_role: Some(3),
        ..Default::default()
    })
    .await;
    let client = admin
        .create_api_key(
            &root,
            "recorder-client",
            KeyAccess::client(vec!["default".into()], "development"),
        )
        .await
        .unwrap()
        .secret;
    let callers = Callers {
        admin: key.secret,
        pat,
        viewer,
        client,
    };
    (toggle_admin::http::router(admin), callers)
}
