//! What `plan`, `apply` and `export` share: the server they talk to (`--url`, `--key`), the
//! target (`--project`, `--environment`), the document they read, and how a failed request is
//! told.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};
use toggle_admin::model::ImportMode;

/// Where the server is and who calls it.
#[derive(Debug, Args)]
pub struct Connection {
    /// The server's base URL, e.g. https://flags.example.com
    #[arg(long, env = "TOGGLE_ADMIN_URL", value_name = "URL")]
    url: String,

    /// An API key (an admin key, or one with the import's permissions)
    #[arg(long, env = "TOGGLE_ADMIN_KEY", value_name = "KEY")]
    key: String,
}

/// `--mode` of `plan` and `apply`.
#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum Mode {
    /// Every feature of the file made as the file says (Unleash's import)
    #[default]
    Replace,
    /// Only the features the server lacks are created; existing ones are left as they are
    CreateMissing,
}

impl From<Mode> for ImportMode {
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Replace => ImportMode::Replace,
            Mode::CreateMissing => ImportMode::CreateMissing,
        }
    }
}

/// FILE and its target, for `plan` and `apply`.
#[derive(Debug, Args)]
pub struct Document {
    /// An export document ({features, featureStrategies, …}, as `export` writes it) or a
    /// full import body ({project, environment, data})
    #[arg(value_name = "FILE")]
    file: PathBuf,

    /// The target project (needed for an export document; a full import body names its own)
    #[arg(long, value_name = "PROJECT")]
    project: Option<String>,

    /// The target environment (needed for an export document; a full import body names its own)
    #[arg(long, value_name = "ENVIRONMENT")]
    environment: Option<String>,

    /// What happens to features the server has already
    #[arg(long, value_enum, default_value_t = Mode::Replace)]
    mode: Mode,
}

impl Document {
    pub fn mode(&self) -> ImportMode {
        self.mode.into()
    }

    /// The import body FILE stands for.
    pub async fn body(&self) -> Result<Value, String> {
        let document = read_json(&self.file).await?;
        import_body(
            document,
            self.project.as_deref(),
            self.environment.as_deref(),
        )
        .map_err(|e| format!("{}: {e}", self.file.display()))
    }
}

/// A JSON file, read whole.
pub async fn read_json(path: &Path) -> Result<Value, String> {
    let text = tokio::fs::read(path)
        .await
        .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
    serde_json::from_slice(&text)
        .map_err(|e| format!("{}: not a JSON document: {e}", path.display()))
}

/// The import body of `document`: an export document (`{features, featureStrategies, …}`) is
/// wrapped as `{project, environment, data}`, a full import body (an object with `data`) is
/// taken as it is, with `project` and `environment`, when given, checked against its own.
pub fn import_body(
    document: Value,
    project: Option<&str>,
    environment: Option<&str>,
) -> Result<Value, String> {
    let Value::Object(members) = document else {
        return Err("expected a JSON object (an export document or an import body)".into());
    };
    if members.get("data").is_some_and(Value::is_object) && !members.contains_key("features") {
        for (flag, member, given) in [
            ("--project", "project", project),
            ("--environment", "environment", environment),
        ] {
            if let Some(given) = given
                && members.get(member).and_then(Value::as_str) != Some(given)
            {
                return Err(format!(
                    "an import body for {member} {}, but {flag} {given}",
                    members.get(member).unwrap_or(&Value::Null)
                ));
            }
        }
        return Ok(Value::Object(members));
    }
    let (Some(project), Some(environment)) = (project, environment) else {
        return Err(
            "an export document: say where it goes with --project and --environment".into(),
        );
    };
    Ok(json!({
        "project": project,
        "environment": environment,
        "data": Value::Object(members),
    }))
}

/// How many features an import body holds.
pub fn feature_count(body: &Value) -> usize {
    body.pointer("/data/features")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// `n` with thousands separated by commas: 1,234.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A server answering the admin API.
pub struct Server {
    client: reqwest::Client,
    base: String,
    key: String,
}

/// A request that failed.
pub enum Failure {
    /// The route is not there: 404 naming the path, or 405 (an older server).
    NoRoute,
    /// Anything else, told.
    Other(String),
}

impl Server {
    pub fn new(connection: &Connection) -> Result<Self, String> {
        // reqwest is built without a default TLS provider: ring, which the library's
        // PostgreSQL TLS already brings. Installing twice is harmless (the first one stays).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .user_agent(concat!("toggle-admin/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        let base = connection.url.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!(
                "--url {}: expected an http:// or https:// URL",
                connection.url
            ));
        }
        Ok(Self {
            client,
            base,
            key: connection.key.clone(),
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// POST `body` as JSON to `path` (with its query); the answer's body, if the status is a
    /// success.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Vec<u8>, Failure> {
        let url = format!("{}{path}", self.base);
        let response = self
            .client
            .post(&url)
            .header(reqwest::header::AUTHORIZATION, &self.key)
            .json(body)
            .send()
            .await
            .map_err(|e| Failure::Other(format!("cannot reach {}: {}", self.base, chain(&e))))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| Failure::Other(format!("reading the answer of {url}: {}", chain(&e))))?;
        if status.is_success() {
            return Ok(bytes.to_vec());
        }
        let error: Option<Map<String, Value>> = serde_json::from_slice(&bytes).ok();
        let message = error
            .as_ref()
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str);
        let route = path.split('?').next().unwrap_or(path);
        if status == reqwest::StatusCode::METHOD_NOT_ALLOWED
            || (status == reqwest::StatusCode::NOT_FOUND
                && message.is_none_or(|m| m.contains(route)))
        {
            return Err(Failure::NoRoute);
        }
        Err(Failure::Other(told(status, error.as_ref(), &bytes)))
    }

    /// The answer of `post`, read as `T`.
    pub async fn post_json<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &Value,
    ) -> Result<T, Failure> {
        let bytes = self.post(path, body).await?;
        serde_json::from_slice(&bytes).map_err(|e| {
            Failure::Other(format!(
                "{}{path} answered something this command cannot read: {e}",
                self.base
            ))
        })
    }
}

/// A failed answer, told: its status, the error's name and message, and each detail on a
/// line of its own.
fn told(status: reqwest::StatusCode, error: Option<&Map<String, Value>>, bytes: &[u8]) -> String {
    let mut out = format!("the server answered {status}");
    let Some(error) = error else {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim();
        if !text.is_empty() {
            let _ = write!(out, ": {}", text.chars().take(500).collect::<String>());
        }
        return out;
    };
    if let Some(name) = error.get("name").and_then(Value::as_str) {
        let _ = write!(out, ": {name}");
    }
    if let Some(message) = error.get("message").and_then(Value::as_str) {
        let _ = write!(out, ": {message}");
    }
    for detail in error
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = detail.get("path").and_then(Value::as_str).unwrap_or("");
        let message = detail.get("message").and_then(Value::as_str).unwrap_or("");
        let _ = write!(out, "\n  {path}: {message}");
    }
    out
}

/// An error with its causes, which reqwest keeps apart (the refused connection is a cause).
fn chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let _ = write!(out, ": {cause}");
        source = cause.source();
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_export_document_is_wrapped_and_an_import_body_kept() {
        let bare = json!({"features": [], "featureStrategies": []});
        let body = import_body(bare.clone(), Some("shop"), Some("production")).unwrap();
        assert_eq!(body["project"], "shop");
        assert_eq!(body["data"], bare);
        assert!(import_body(bare, Some("shop"), None).is_err());

        let full =
            json!({"project": "shop", "environment": "production", "data": {"features": []}});
        assert_eq!(import_body(full.clone(), None, None).unwrap(), full);
        assert_eq!(import_body(full.clone(), Some("shop"), None).unwrap(), full);
        assert!(import_body(full, Some("other"), None).is_err());
        assert!(import_body(json!([1]), Some("a"), Some("b")).is_err());
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234), "1,234");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
