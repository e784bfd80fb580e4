//! The session table and the signed-in state (the pages that start and end a session are
//! in `sign_in.rs`).
//!
//! A session holds the [`Caller`] the key authenticated as, never the key: the facade
//! re-reads the key's record at every call, so a revoked or expired key stops working at its
//! next click. The browser holds only the session's random id (256 bits) in an `HttpOnly;
//! SameSite=Strict` cookie scoped to the base path.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::Ui;
use crate::auth::Caller;

/// 32 random bytes, hex: a session id or a CSRF token. `None` if the system has no
/// randomness to give.
pub(crate) fn random_token() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The session cookie's name.
pub(crate) const COOKIE: &str = "toggle_admin_session";

/// When the session cookie is marked `Secure` (sent over HTTPS only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SecureCookie {
    /// When the sign-in request came over TLS: its URI has the `https` scheme, or a proxy
    /// in front said so (`X-Forwarded-Proto: https` or `Forwarded: proto=https`). Behind a
    /// proxy that terminates TLS without saying so, use [`Always`](Self::Always).
    #[default]
    Auto,
    /// Always (the page is served over HTTPS only).
    Always,
    /// Never (plain HTTP, e.g. on localhost).
    Never,
}

/// One signed-in browser.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub caller: Caller,
    /// The token every state-changing form of this session carries.
    pub csrf: String,
    /// A message for the next page (what the last POST did).
    pub flash: Option<String>,
    expires: Instant,
}

/// The sessions, by id; bounded and expiring.
#[derive(Debug)]
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Session>>,
    idle: Duration,
    max: usize,
}

impl Sessions {
    pub(crate) fn new(idle: Duration, max: usize) -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            idle,
            max,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic while holding the lock leaves the map consistent (every change is one
        // insert or remove), so a poisoned lock is used as is.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Start a session for `caller`; its id.
    pub(crate) fn start(&self, caller: Caller) -> Option<String> {
        let id = random_token()?;
        let session = Session {
            caller,
            csrf: random_token()?,
            flash: None,
            expires: Instant::now() + self.idle,
        };
        let mut map = self.lock();
        let now = Instant::now();
        map.retain(|_, s| s.expires > now);
        while map.len() >= self.max {
            let Some(oldest) = map
                .iter()
                .min_by_key(|(_, s)| s.expires)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            map.remove(&oldest);
        }
        map.insert(id.clone(), session);
        Some(id)
    }

    /// The session `id`, if it has not expired; its clock restarts, and its flash message
    /// is taken.
    fn touch(&self, id: &str) -> Option<Session> {
        let mut map = self.lock();
        let now = Instant::now();
        let session = map.get_mut(id)?;
        if session.expires <= now {
            map.remove(id);
            return None;
        }
        session.expires = now + self.idle;
        let found = session.clone();
        session.flash = None;
        Some(found)
    }

    /// Leave `message` for the session's next page.
    pub(crate) fn flash(&self, id: &str, message: String) {
        if let Some(session) = self.lock().get_mut(id) {
            session.flash = Some(message);
        }
    }

    pub(crate) fn end(&self, id: &str) {
        self.lock().remove(id);
    }

    /// How many sessions are kept now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// The signed-in session of a request; a request without one is sent to the sign-in page.
#[derive(Debug, Clone)]
pub(crate) struct Signed {
    pub id: String,
    pub session: Session,
}

impl Signed {
    pub(crate) fn caller(&self) -> &Caller {
        &self.session.caller
    }
}

impl FromRequestParts<Ui> for Signed {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, ui: &Ui) -> Result<Self, Self::Rejection> {
        let found = session_id(&parts.headers)
            .and_then(|id| ui.sessions.touch(&id).map(|session| Signed { id, session }));
        match found {
            Some(signed) => Ok(signed),
            None => Err(Redirect::to(&ui.url("/sign-in")).into_response()),
        }
    }
}

/// The session id the request's cookie names.
fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

/// Whether the request came over TLS, as far as it can tell.
fn over_tls(parts_uri_scheme: Option<&str>, headers: &HeaderMap) -> bool {
    let forwarded_proto = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"));
    let forwarded = headers
        .get(header::FORWARDED)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("proto=https"));
    parts_uri_scheme == Some("https") || forwarded_proto || forwarded
}

pub(super) fn cookie(
    ui: &Ui,
    value: &str,
    max_age: Option<u64>,
    secure: bool,
) -> Option<HeaderValue> {
    let mut text = format!(
        "{COOKIE}={value}; Path={}; HttpOnly; SameSite=Strict",
        ui.config.base
    );
    if let Some(age) = max_age {
        text.push_str(&format!("; Max-Age={age}"));
    }
    if secure {
        text.push_str("; Secure");
    }
    HeaderValue::from_str(&text).ok()
}

pub(super) fn secure(ui: &Ui, scheme: Option<&str>, headers: &HeaderMap) -> bool {
    match ui.config.secure_cookie {
        SecureCookie::Always => true,
        SecureCookie::Never => false,
        SecureCookie::Auto => over_tls(scheme, headers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemoryStore, ToggleAdmin};

    async fn caller() -> Caller {
        let admin = ToggleAdmin::new(MemoryStore::new());
        let key = admin.bootstrap_admin_key("ops").await.unwrap();
        admin.authenticate(Some(&key.secret)).await.unwrap()
    }

    #[tokio::test]
    async fn the_table_is_bounded_and_ends_the_session_closest_to_expiry() {
        let sessions = Sessions::new(Duration::from_secs(60), 2);
        let first = sessions.start(caller().await).unwrap();
        let second = sessions.start(caller().await).unwrap();
        let third = sessions.start(caller().await).unwrap();
        assert_eq!(sessions.len(), 2);
        assert!(sessions.touch(&first).is_none());
        assert!(sessions.touch(&second).is_some());
        assert!(sessions.touch(&third).is_some());
    }

    #[tokio::test]
    async fn an_idle_session_expires() {
        let sessions = Sessions::new(Duration::ZERO, 10);
        let id = sessions.start(caller().await).unwrap();
        assert!(sessions.touch(&id).is_none());
    }
}
