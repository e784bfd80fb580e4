//! What a key request means: each token `type` of Unleash's `createApiTokenSchema` mapped to
//! the access a key gets, for the HTTP routes and library callers alike; and the checks every
//! new key passes before its records are read.

use chrono::{DateTime, Utc};

use super::records::{environment_key, project_key};
use super::users::user_key;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{ApiKeyRequest as TokenRequest, ClientKeyType, KeyAccess};
use crate::names::{MAX_NAME, display_name_problem};
use crate::store::Key;

/// What a token request means: the one place where each token `type` of Unleash's
/// `createApiTokenSchema` gets its meaning, for the HTTP route and library callers alike
/// ([`ToggleAdmin::create_token`](crate::ToggleAdmin::create_token)).
///
/// * `admin`: every permission everywhere; `environment`, `project` and `projects` must be
///   absent or `*`.
/// * `client` and `backend` (its newer name): a client key for `projects` (or `project`;
///   every project when neither is named) in one `environment`
///   ([`DEFAULT_CLIENT_ENVIRONMENT`](super::DEFAULT_CLIENT_ENVIRONMENT) when absent).
/// * `frontend`: the same scope, for browser and mobile SDKs: the key may call the frontend
///   API (`/api/frontend*`) only.
/// * Any other type is refused.
///
/// The type is matched without regard to case. Problems name the body's field
/// (`/type`, `/environment`, `/project`).
pub fn token_access(request: &TokenRequest) -> std::result::Result<KeyAccess, Vec<ErrorDetail>> {
    let mut problems = Vec::new();
    match token_access_into(request, &mut problems) {
        Some(access) if problems.is_empty() => Ok(access),
        _ => Err(problems),
    }
}

fn token_access_into(request: &TokenRequest, problems: &mut Vec<ErrorDetail>) -> Option<KeyAccess> {
    let everywhere = |scope: Option<&str>| scope.is_none_or(|s| s == "*");
    let token_type = request.token_type.to_ascii_lowercase();
    match token_type.as_str() {
        "admin" => {
            let mut ok = true;
            if !everywhere(request.environment.as_deref()) {
                ok = false;
                problems.push(ErrorDetail::at(
                    "/environment",
                    "an admin token covers every environment: leave out environment or send \"*\"",
                ));
            }
            let projects_everywhere = request
                .projects
                .as_deref()
                .is_none_or(|p| p.iter().all(|p| p == "*"));
            if !everywhere(request.project.as_deref()) || !projects_everywhere {
                ok = false;
                problems.push(ErrorDetail::at(
                    "/project",
                    "an admin token covers every project: leave out project and projects or send \"*\"",
                ));
            }
            ok.then_some(KeyAccess::Admin)
        }
        "client" | "backend" | "frontend" => {
            let environment = match request.environment.as_deref() {
                // Unleash's default for a client token without an environment.
                None => super::DEFAULT_CLIENT_ENVIRONMENT,
                Some("*") | Some("") => {
                    problems.push(ErrorDetail::at(
                        "/environment",
                        "a client or frontend token is for one environment: name it",
                    ));
                    return None;
                }
                Some(environment) => environment,
            };
            let projects = match (&request.projects, &request.project) {
                (Some(projects), _) if !projects.is_empty() => projects.clone(),
                (_, Some(project)) => vec![project.clone()],
                _ => vec!["*".to_owned()],
            };
            let KeyAccess::Client {
                projects,
                environment,
                ..
            } = KeyAccess::client(projects, environment)
            else {
                return None;
            };
            Some(KeyAccess::Client {
                token_type: match token_type.as_str() {
                    "backend" => ClientKeyType::Backend,
                    "frontend" => ClientKeyType::Frontend,
                    _ => ClientKeyType::Client,
                },
                projects,
                environment,
            })
        }
        other => {
            problems.push(ErrorDetail::at(
                "/type",
                format!(
                    "the token type must be \"admin\", \"client\", \"backend\" or \"frontend\", not \"{other}\""
                ),
            ));
            None
        }
    }
}

/// The static checks of a new key (see
/// [`create_api_key_expiring`](super::ToggleAdmin::create_api_key_expiring)): every problem in one
/// [`Error::Validation`]; otherwise the records the key names, with the path of each.
pub(super) fn check_new_key(
    name_problem: Option<&str>,
    access: &KeyAccess,
    expires_at: Option<DateTime<Utc>>,
) -> Result<(Vec<Key>, Vec<String>)> {
    let mut problems = Vec::new();
    if let Some(problem) = name_problem {
        problems.push(ErrorDetail::at("name", format!("the key's name {problem}")));
    }
    if let Some(at) = expires_at
        && at <= Utc::now()
    {
        problems.push(ErrorDetail::at(
            "expiresAt",
            "The expiry date cannot be in the past.",
        ));
    }
    let mut named: Vec<Key> = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    match access {
        KeyAccess::Admin => {}
        KeyAccess::User { user_id } => {
            named.push(user_key(*user_id));
            paths.push(String::new());
        }
        KeyAccess::Client {
            projects,
            environment,
            ..
        } => {
            let scopes = projects
                .iter()
                .enumerate()
                .map(|(i, p)| ("project", format!("access.projects[{i}]"), p.as_str()))
                .chain([(
                    "environment",
                    "access.environment".to_owned(),
                    environment.as_str(),
                )]);
            for (what, path, scope) in scopes {
                if what == "project" && scope == "*" {
                    continue;
                }
                if display_name_problem(scope, MAX_NAME).is_some() || scope == "*" {
                    problems.push(ErrorDetail::at(
                        path,
                        format!("there is no {what} named {}", quoted(scope)),
                    ));
                } else {
                    named.push(if what == "project" {
                        project_key(scope)
                    } else {
                        environment_key(scope)
                    });
                    paths.push(path);
                }
            }
        }
        KeyAccess::Grants { grants } => {
            for (i, grant) in grants.iter().enumerate() {
                for (what, scope, key_of) in [
                    ("project", &grant.project, project_key as fn(&str) -> Key),
                    ("environment", &grant.environment, environment_key),
                ] {
                    if let Some(scope) = scope.as_deref().filter(|s| *s != "*") {
                        if display_name_problem(scope, MAX_NAME).is_some() {
                            problems.push(ErrorDetail::at(
                                format!("access.grants[{i}].{what}"),
                                format!("there is no {what} named {}", quoted(scope)),
                            ));
                        } else {
                            named.push(key_of(scope));
                            paths.push(format!("access.grants[{i}].{what}"));
                        }
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::validation("The API key is not valid.", problems));
    }
    Ok((named, paths))
}

/// `text` as a JSON string, so that any character in it is shown escaped.
pub(super) fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}
