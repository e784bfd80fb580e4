//! The door: who may do what, decided in one place.
//!
//! Every operation is admitted by a [`Permit`]: the caller, what it was admitted for (the
//! [`Need`]s), and the records the decision rested on (the key's record, and for a key acting
//! as a user its user, groups, roles and the project access read), each at the revision read.
//! A write commits through the flow (`flow.rs`), which makes those revisions preconditions of
//! its commit: if the key is revoked, or the user's access changes, before the commit, the
//! commit conflicts and the flow decides again on a fresh read. So no write authorised by a
//! key commits after that key's revocation has returned.
//!
//! The HTTP router, the admin page and embedding applications all pass through here:
//! [`ToggleAdmin::permit`] decides before a request's body is read (the HTTP order of checks:
//! permission before body shape), and the operations that take an [`Authority`] accept the
//! permit, so the decision is made once per request.
//!
//! The key-type rules live here too: a client (backend) or frontend key is refused on every
//! admin operation ([`wrong_key_type`]), an admin key holds everything, a key with grants
//! holds what they cover, a key acting as a user holds its user's roles (read afresh).

use std::sync::Arc;

use chrono::Utc;

use super::ToggleAdmin;
use super::author::Author;
use super::records::{api_key_key, decode};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{ApiKeyInfo, Grant, KeyAccess, Permission, User};
use crate::store::{Key, Revision, Versioned};

/// One permission an operation needs: a permission, optionally in a project and an
/// environment. A grant without a project (or environment) covers all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need<'a> {
    /// The permission, by Unleash's name.
    pub permission: Permission,
    /// The project it is needed in, if any.
    pub project: Option<&'a str>,
    /// The environment it is needed in, if any.
    pub environment: Option<&'a str>,
}

impl<'a> Need<'a> {
    /// `permission` everywhere (a root permission such as `ADMIN` or `CREATE_PROJECT`).
    pub fn root(permission: Permission) -> Self {
        Self {
            permission,
            project: None,
            environment: None,
        }
    }

    /// `permission` in `project`.
    pub fn project(permission: Permission, project: &'a str) -> Self {
        Self {
            permission,
            project: Some(project),
            environment: None,
        }
    }

    /// `permission` in `environment` of `project`.
    pub fn environment(permission: Permission, project: &'a str, environment: &'a str) -> Self {
        Self {
            permission,
            project: Some(project),
            environment: Some(environment),
        }
    }

    fn owned(&self) -> OwnedNeed {
        OwnedNeed {
            permission: self.permission,
            project: self.project.map(str::to_owned),
            environment: self.environment.map(str::to_owned),
        }
    }
}

/// A [`Need`] kept in a [`Permit`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct OwnedNeed {
    permission: Permission,
    project: Option<String>,
    environment: Option<String>,
}

impl OwnedNeed {
    fn borrowed(&self) -> Need<'_> {
        Need {
            permission: self.permission,
            project: self.project.as_deref(),
            environment: self.environment.as_deref(),
        }
    }
}

/// An admission to an operation: who was admitted, for what, and the records the decision
/// rested on at the revisions read. A write commits with those revisions as preconditions,
/// so a key revoked before the commit makes it conflict and the decision is made again.
/// It also names who the change is by, from the same reads (`author.rs`): for a key acting
/// as a user, its user as the decision read it.
///
/// Made by [`ToggleAdmin::permit`] (or [`permit_any`](ToggleAdmin::permit_any),
/// [`permit_secret`](ToggleAdmin::permit_secret)); an operation taking an [`Authority`]
/// uses it when it was made for that operation's needs, and decides afresh otherwise, so a
/// permit can never admit more than it was made for. A permit is a snapshot: the flow's
/// commit checks that the records it rests on are unchanged, and decides again if not.
#[derive(Debug, Clone)]
pub struct Permit {
    caller: Caller,
    rule: Rule,
    /// Shared: a permit is cloned (the variants writers keep theirs), and read by every
    /// attempt of its write.
    decided: Arc<Decided>,
}

/// A decision: the records it rested on, with their revisions, and who the changes it
/// admits are by.
#[derive(Debug)]
struct Decided {
    basis: Vec<(Key, Revision)>,
    author: Author,
}

/// What a permit was decided on, so that the flow can decide again after a conflict.
#[derive(Debug, Clone)]
enum Rule {
    /// Every need held.
    All(Vec<OwnedNeed>),
    /// One of the needs held (the operation decides which it needs once it has its input).
    Any(Vec<OwnedNeed>),
    /// A client (backend) key, in its scope (the client API's writes: registrations).
    Client,
}

impl Permit {
    /// The caller admitted.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// True when this permit was decided for all of `needs` (or more).
    fn covers(&self, needs: &[Need<'_>]) -> bool {
        match &self.rule {
            Rule::All(held) => needs
                .iter()
                .all(|n| held.iter().any(|h| h.borrowed() == *n)),
            Rule::Any(_) => needs.is_empty(),
            Rule::Client => false,
        }
    }

    /// The records the decision rested on, with their revisions (the key's record first).
    pub(crate) fn basis(&self) -> &[(Key, Revision)] {
        &self.decided.basis
    }

    /// Who the changes this permit admits are by, as their events record them.
    pub(crate) fn author(&self) -> &Author {
        &self.decided.author
    }

    /// The permit of `caller` for `rule` on `decided`.
    fn new(caller: Caller, rule: Rule, decided: Decided) -> Self {
        Self {
            caller,
            rule,
            decided: Arc::new(decided),
        }
    }

    /// The permit of an SDK's key (`caller`, whose record is at `key` at `revision`): its
    /// changes (what SDKs report) are by the key, as Unleash's are by its token.
    fn client(caller: Caller, key: Key, revision: Revision) -> Self {
        let author = Author::of(&caller.info, None);
        let basis = vec![(key, revision)];
        Self::new(caller, Rule::Client, Decided { basis, author })
    }
}

/// Who asks for an operation: a caller whose permission the operation decides, or a
/// [`Permit`] decided before (by [`ToggleAdmin::permit`], e.g. before a request's body was
/// read). `&Caller` and `Permit` both convert into it.
#[derive(Debug)]
pub enum Authority<'a> {
    /// Decide the operation's permission for this caller.
    Caller(&'a Caller),
    /// Use this permit if it was made for the operation's needs; else decide afresh for its
    /// caller.
    Permit(Permit),
}

impl<'a> From<&'a Caller> for Authority<'a> {
    fn from(caller: &'a Caller) -> Self {
        Authority::Caller(caller)
    }
}

impl From<Permit> for Authority<'_> {
    fn from(permit: Permit) -> Self {
        Authority::Permit(permit)
    }
}

impl ToggleAdmin {
    /// Admit `caller` for an operation that needs every one of `needs`: the key must still
    /// exist and not be expired, must not be a client or frontend key, and must hold each
    /// need. Missing permissions fail with one [`Error::NoAccess`] naming all of them; a key
    /// revoked since it was authenticated, or expired, with [`Error::AuthenticationRequired`].
    ///
    /// The key's record is read afresh, so a revocation takes effect at once; for a key
    /// acting as a user, so are its user's roles and the project access the needs name. An
    /// empty `needs` admits any valid admin-API key (the reads every key may do).
    pub async fn permit(&self, caller: &Caller, needs: &[Need<'_>]) -> Result<Permit> {
        let decided = self.decide_for(caller, needs).await?;
        Ok(Permit::new(
            caller.clone(),
            Rule::All(needs.iter().map(Need::owned).collect()),
            decided,
        ))
    }

    /// Admit `caller` if it holds at least one of `alternatives`: for an adapter that must
    /// refuse before a body is read, when which permission the operation needs depends on
    /// the body (project access: users, groups, or both). The operation then decides its
    /// exact needs; this permit only tells that the caller may try.
    pub async fn permit_any(&self, caller: &Caller, alternatives: &[Need<'_>]) -> Result<Permit> {
        let mut refusal = None;
        for need in alternatives {
            match self.decide_for(caller, std::slice::from_ref(need)).await {
                Ok(decided) => {
                    return Ok(Permit::new(
                        caller.clone(),
                        Rule::Any(alternatives.iter().map(Need::owned).collect()),
                        decided,
                    ));
                }
                Err(error @ Error::NoAccess { .. }) => refusal = Some(error),
                Err(other) => return Err(other),
            }
        }
        match refusal {
            Some(error) => Err(error),
            None => self.permit(caller, &[]).await,
        }
    }

    /// Authenticate `secret` (the `Authorization` header's value) and admit it for `needs`,
    /// in one step, for an adapter about to change a hot record: the key's record is the one
    /// a decision view shows (see [`Store::decision_view`](crate::Store::decision_view)), so
    /// admitting costs no read of the store where that view is in memory. The commit expects
    /// that record's revision, so a key revoked or changed since is refused at the commit's
    /// retry; a refusal decided on the view is decided again on the store's current record.
    pub async fn permit_secret(&self, secret: Option<&str>, needs: &[Need<'_>]) -> Result<Permit> {
        let caller = self.authenticate_to_commit(secret).await?;
        let refusal = match self.permit_as_authenticated(&caller, needs).await {
            Ok(permit) => return Ok(permit),
            Err(refusal) => refusal,
        };
        let current = self.authenticate(secret).await?;
        if current.revision == caller.revision {
            return Err(refusal);
        }
        self.permit_as_authenticated(&current, needs).await
    }

    /// [`permit`](Self::permit) on the key's record as `caller`'s authentication read it,
    /// without reading it again: for an adapter that authenticated `caller` in this same
    /// request. The guarantee holds: the record's revision as authenticated is in the
    /// permit's basis, hence a precondition of the commit, so a revocation between that read
    /// and the commit conflicts, and the retry decides again on a fresh read (and refuses).
    pub async fn permit_as_authenticated(
        &self,
        caller: &Caller,
        needs: &[Need<'_>],
    ) -> Result<Permit> {
        let key = api_key_key(&caller.secret_hash);
        let decided = self
            .decide(key, caller.revision, &caller.info, needs)
            .await?;
        Ok(Permit::new(
            caller.clone(),
            Rule::All(needs.iter().map(Need::owned).collect()),
            decided,
        ))
    }

    /// Admit `caller` to change features of `project` (`UPDATE_FEATURE` there), before a
    /// body is read: what changing a feature's tags, links and lifecycle needs. The
    /// operations of those take the permit.
    pub async fn permit_feature_update(&self, caller: &Caller, project: &str) -> Result<Permit> {
        self.permit(caller, &[Need::project(Permission::UpdateFeature, project)])
            .await
    }

    /// The permit for an operation needing `needs`, from `authority`: its permit when it was
    /// made for them, else a fresh decision for its caller.
    pub(crate) async fn admit(
        &self,
        authority: Authority<'_>,
        needs: &[Need<'_>],
    ) -> Result<Permit> {
        match authority {
            Authority::Permit(permit) if permit.covers(needs) => Ok(permit),
            Authority::Permit(permit) => self.permit(&permit.caller, needs).await,
            Authority::Caller(caller) => self.permit(caller, needs).await,
        }
    }

    /// Admit a client (backend) key to the client API's writes; with the environment of
    /// its scope. The key's record is the permit's basis: a key revoked before the commit
    /// makes it conflict.
    pub(crate) async fn permit_client(&self, authority: Authority<'_>) -> Result<(Permit, String)> {
        let caller = match authority {
            Authority::Permit(permit) if Self::is_sdk(&permit) => {
                let (_, scope) = self.sdk_scope(Authority::Permit(permit.clone())).await?;
                return Ok((permit, scope.environment));
            }
            Authority::Permit(permit) => permit.caller,
            Authority::Caller(caller) => caller.clone(),
        };
        let (scope, (key, revision)) = self.client_scope_and_basis(&caller).await?;
        Ok((Permit::client(caller, key, revision), scope.environment))
    }

    /// Authenticate `secret` as an SDK's key (client or frontend), reading its record once:
    /// the SDK routes (the frontend API, OFREP) then serve in the key's scope as read here,
    /// without reading the key again in the same request. A missing, unknown, revoked or
    /// expired key → [`Error::AuthenticationRequired`]; an admin or user key →
    /// [`Error::NoAccess`] (the SDK routes are not theirs, as in Unleash).
    pub async fn permit_sdk(&self, secret: Option<&str>) -> Result<Permit> {
        let caller = self.authenticate(secret).await?;
        if !caller.info.access.is_client() {
            return Err(wrong_key_type());
        }
        let key = api_key_key(&caller.secret_hash);
        let revision = caller.revision;
        Ok(Permit::client(caller, key, revision))
    }

    /// True for a permit of an SDK's key ([`permit_sdk`](ToggleAdmin::permit_sdk)).
    pub(crate) fn is_sdk(permit: &Permit) -> bool {
        matches!(permit.rule, Rule::Client)
    }

    /// The same decision as `permit` made again (after a conflict: the key or its user's
    /// access may have changed), on the store's current records.
    pub(crate) async fn permit_again(&self, permit: &Permit) -> Result<Permit> {
        match &permit.rule {
            Rule::All(needs) => {
                let needs: Vec<Need<'_>> = needs.iter().map(OwnedNeed::borrowed).collect();
                self.permit(&permit.caller, &needs).await
            }
            Rule::Any(needs) => {
                let needs: Vec<Need<'_>> = needs.iter().map(OwnedNeed::borrowed).collect();
                self.permit_any(&permit.caller, &needs).await
            }
            Rule::Client => Ok(self
                .permit_client(Authority::Caller(&permit.caller))
                .await?
                .0),
        }
    }

    /// [`permit_again`](Self::permit_again) on the key's record as a decision view shows
    /// it (which is a precondition of the commit like the other records read there); a
    /// refusal is decided again on the store's current record.
    pub(crate) async fn permit_again_deciding(&self, permit: &Permit) -> Result<Permit> {
        let key = api_key_key(&permit.caller.secret_hash);
        if let Rule::All(needs) = &permit.rule
            && let Ok(view) = self.store.decision_view().await
            && let Ok(Some(record)) = view.get(&key).await
        {
            let needs: Vec<Need<'_>> = needs.iter().map(OwnedNeed::borrowed).collect();
            if let Ok(decided) = self
                .decide_on_record(key, &record, &permit.caller, &needs)
                .await
            {
                return Ok(Permit::new(
                    permit.caller.clone(),
                    permit.rule.clone(),
                    decided,
                ));
            }
        }
        self.permit_again(permit).await
    }

    /// Check that `caller`'s key still exists, has not expired, and holds every one of
    /// `needs`; the records the decision read, with their revisions.
    pub(crate) async fn require(
        &self,
        caller: &Caller,
        needs: &[Need<'_>],
    ) -> Result<Vec<(Key, Revision)>> {
        Ok(self.decide_for(caller, needs).await?.basis)
    }

    /// [`require`](Self::require), with who the changes it admits are by.
    async fn decide_for(&self, caller: &Caller, needs: &[Need<'_>]) -> Result<Decided> {
        let key = api_key_key(&caller.secret_hash);
        // The record is read at every call, so a revoked or changed key takes effect at once.
        let Some(record) = self.store.get(&key).await? else {
            return Err(Error::AuthenticationRequired {
                message: "The API key is unknown or was revoked.".to_owned(),
            });
        };
        self.decide_on_record(key, &record, caller, needs).await
    }

    /// The decision on the key's `record` at `key`, as read for `caller`. Only its decoding
    /// is skipped while it is still at the revision the caller was authenticated at (a
    /// record's revision changes with every write to it).
    async fn decide_on_record(
        &self,
        key: Key,
        record: &Versioned,
        caller: &Caller,
        needs: &[Need<'_>],
    ) -> Result<Decided> {
        let decoded: ApiKeyInfo;
        let info = if record.revision == caller.revision {
            &caller.info
        } else {
            decoded = decode(&key, &record.value)?;
            &decoded
        };
        self.decide(key, record.revision, info, needs).await
    }

    /// The decision on the key `info`, stored at `key` at `revision`; its author is the key,
    /// or the user it acts as, as read for the decision.
    async fn decide(
        &self,
        key: Key,
        revision: Revision,
        info: &ApiKeyInfo,
        needs: &[Need<'_>],
    ) -> Result<Decided> {
        if info.is_expired_at(Utc::now()) {
            return Err(expired());
        }
        if info.access.is_client() {
            return Err(wrong_key_type());
        }
        let mut basis = vec![(key, revision)];
        let (user, grants) = self.grants_of(&info.access, needs, &mut basis).await?;
        let mut missing: Vec<&Need<'_>> = Vec::new();
        for need in needs {
            let held = grants
                .iter()
                .any(|g| g.covers(need.permission, need.project, need.environment));
            if !held && !missing.iter().any(|m| m.permission == need.permission) {
                missing.push(need);
            }
        }
        if missing.is_empty() {
            let author = Author::of(info, user.as_ref());
            return Ok(Decided { basis, author });
        }
        Err(no_access(&missing))
    }

    /// The grants a key holds now, as far as `needs` need them: a key acting as a user gets
    /// its user's root role and the roles it holds in the projects the needs name, read
    /// afresh, so that access changes take effect at the next call. The records read for it
    /// are added to `basis` with their revisions; with the user's record as read (`None`
    /// for a key acting as no user, or a user that no longer exists).
    async fn grants_of(
        &self,
        access: &KeyAccess,
        needs: &[Need<'_>],
        basis: &mut Vec<(Key, Revision)>,
    ) -> Result<(Option<User>, Vec<Grant>)> {
        Ok(match access {
            KeyAccess::Admin => (None, vec![Grant::everywhere(Permission::Admin)]),
            KeyAccess::Grants { grants } => (None, grants.clone()),
            KeyAccess::User { user_id } => self.user_and_grants(*user_id, needs, basis).await?,
            KeyAccess::Client { .. } => (None, Vec::new()),
        })
    }
}

/// The 401 of a key whose expiry has passed: refused like a revoked key.
pub(crate) fn expired() -> Error {
    Error::AuthenticationRequired {
        message: "The API key has expired.".to_owned(),
    }
}

/// The 403 of a client or frontend key on an admin operation, with Unleash's message.
pub(crate) fn wrong_key_type() -> Error {
    Error::NoAccess {
        message: "invalid token: expected a different token type for this endpoint".to_owned(),
        permissions: Vec::new(),
    }
}

/// The 403 for the needs that failed, naming every missing permission.
fn no_access(missing: &[&Need<'_>]) -> Error {
    let permissions: Vec<String> = missing.iter().map(|c| c.permission.to_string()).collect();
    let scope = |c: &Need<'_>| match (c.project, c.environment) {
        (Some(p), Some(e)) => format!(" in project \"{p}\", environment \"{e}\""),
        (Some(p), None) => format!(" in project \"{p}\""),
        _ => String::new(),
    };
    let message = match missing {
        [one] => format!(
            "You don't have the required permissions to perform this operation. To perform this action, you need the \"{}\" permission{}.",
            one.permission,
            scope(one)
        ),
        many => format!(
            "You don't have the required permissions to perform this operation. To perform this action, you need all of these permissions: {}.",
            many.iter()
                .map(|c| format!("\"{}\"{}", c.permission, scope(c)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Error::NoAccess {
        message,
        permissions,
    }
}
