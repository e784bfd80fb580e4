//! Who a change is by, as its events and the records it makes name them: decided with the
//! permit that admits the change (`permit.rs`), on the records that decision read.
//!
//! A key acting as a user is its user: the permit reads the user's record to know its roles,
//! and the author is taken from that same read. The record is then in the permit's basis,
//! hence a precondition of the commit, so a user renamed while a change of theirs is being
//! decided makes the commit conflict and the change is decided again under the new name:
//! no event carries a name its user no longer had when it committed, and no write pays for
//! another read of the store.

use crate::model::{ADMIN_TOKEN_USER_ID, ApiKeyInfo, FeatureUser, KeyAccess, SYSTEM_USER_ID, User};

/// Who a change is by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Author {
    /// The name its events record (Unleash's `createdBy`), and what a segment records as
    /// its creator.
    pub(crate) name: String,
    /// The user id its events record (Unleash's `createdByUserId`, see [`author_id`]).
    pub(crate) id: i64,
    /// The user the key acts as, if any: what [`feature_user`](Self::feature_user) shows.
    /// Kept as read, not as the [`FeatureUser`] it becomes, because that needs a Gravatar
    /// hash that only the writes creating a feature use: every permit makes an author.
    user: Option<User>,
}

impl Author {
    /// The author of the changes of the key `info`, whose user (for a key acting as a user)
    /// was read as `user` (`None`: no such user, or a key acting as no user).
    ///
    /// The name is, as Unleash's `extractUsernameFromUser` (`email || username`) takes it,
    /// the user's email, else its username; then (for a record with neither, which the
    /// operations do not make) its display name; else, as for every key acting as no user
    /// (Unleash records an admin token's name), the key's name. An empty text counts as
    /// none, as JavaScript's `||` counts it.
    ///
    /// The user shown on a feature is Unleash's: the user, named by its display name, else
    /// its username, else its email (Unleash names a feature's creator so, not as events
    /// do); Unleash's admin token user for a key acting as no user.
    pub(crate) fn of(info: &ApiKeyInfo, user: Option<&User>) -> Self {
        let user = match info.access {
            KeyAccess::User { .. } => user,
            _ => None,
        };
        let name = user
            .and_then(recorded_name)
            .unwrap_or(&info.name)
            .to_owned();
        Self {
            name,
            id: author_id(&info.access),
            user: user.cloned(),
        }
    }

    /// The user a feature it creates shows as `createdBy` and among its `collaborators`.
    pub(crate) fn feature_user(&self) -> FeatureUser {
        match &self.user {
            Some(u) => FeatureUser {
                id: u.id,
                name: present(&u.name)
                    .or(present(&u.username))
                    .or(present(&u.email))
                    .unwrap_or_default()
                    .to_owned(),
                image_url: u.image_url(),
            },
            None => FeatureUser::admin_token_user(),
        }
    }

    /// The author of what no key admits, by `name`: the service itself.
    pub(crate) fn system(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            id: SYSTEM_USER_ID,
            user: None,
        }
    }
}

/// The name the events of `user`'s changes record (see [`Author::of`]): its email, else
/// its username, else its display name; `None` when it has none of them.
pub(crate) fn recorded_name(user: &User) -> Option<&str> {
    present(&user.email)
        .or(present(&user.username))
        .or(present(&user.name))
}

/// `text` unless it is absent or empty (JavaScript's `||` skips an empty text too).
pub(crate) fn present(text: &Option<String>) -> Option<&str> {
    text.as_deref().filter(|t| !t.is_empty())
}

/// Who the changes of a key with `access` are by, as a user id (Unleash's
/// `createdByUserId`): the user a key acts as; [`ADMIN_TOKEN_USER_ID`] for a key acting as
/// no user that may write (an admin key, a key with grants), as Unleash counts admin
/// tokens; [`SYSTEM_USER_ID`] for a client key (whose only writes are what SDKs report), as
/// Unleash counts other tokens.
pub(crate) fn author_id(access: &KeyAccess) -> i64 {
    match access {
        KeyAccess::User { user_id } => *user_id,
        KeyAccess::Admin | KeyAccess::Grants { .. } => ADMIN_TOKEN_USER_ID,
        KeyAccess::Client { .. } => SYSTEM_USER_ID,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn key(access: KeyAccess) -> ApiKeyInfo {
        ApiKeyInfo {
            id: uuid::Uuid::nil(),
            name: "laptop".to_owned(),
            access,
            created_at: Utc::now(),
            expires_at: None,
        }
    }

    fn user(username: Option<&str>, email: Option<&str>, name: Option<&str>) -> User {
        User {
            id: 7,
            username: username.map(str::to_owned),
            email: email.map(str::to_owned),
            name: name.map(str::to_owned),
            root_role: 2,
            created_at: Utc::now(),
        }
    }

    #[test]
    fn a_user_is_named_by_email_then_username_then_name_then_the_key() {
        let info = key(KeyAccess::User { user_id: 7 });
        let cases = [
            (
                user(Some("al"), Some("al@example.com"), Some("Al")),
                "al@example.com",
            ),
            (user(Some("al"), None, Some("Al")), "al"),
            (user(Some("al"), Some(""), Some("Al")), "al"),
            (user(None, None, Some("Al")), "Al"),
            (user(Some(""), None, None), "laptop"),
        ];
        for (u, expected) in cases {
            let author = Author::of(&info, Some(&u));
            assert_eq!(author.name, expected, "{u:?}");
            assert_eq!(author.id, 7);
        }
        let gone = Author::of(&info, None);
        assert_eq!(gone.name, "laptop");
        assert_eq!(gone.feature_user(), FeatureUser::admin_token_user());
    }

    #[test]
    fn a_feature_shows_its_creator_by_display_name_first() {
        let info = key(KeyAccess::User { user_id: 7 });
        let u = user(Some("al"), Some("al@example.com"), Some("Al"));
        let author = Author::of(&info, Some(&u));
        assert_eq!(author.feature_user().id, 7);
        assert_eq!(author.feature_user().name, "Al");
        assert_eq!(author.feature_user().image_url, u.image_url());
        let u = user(None, Some("al@example.com"), None);
        assert_eq!(
            Author::of(&info, Some(&u)).feature_user().name,
            "al@example.com"
        );
    }

    #[test]
    fn a_key_acting_as_no_user_is_its_name() {
        let u = user(Some("al"), Some("al@example.com"), None);
        for (access, id) in [
            (KeyAccess::Admin, ADMIN_TOKEN_USER_ID),
            (KeyAccess::Grants { grants: vec![] }, ADMIN_TOKEN_USER_ID),
        ] {
            // A user record given for a key acting as no user is not its author.
            let author = Author::of(&key(access), Some(&u));
            assert_eq!(author.name, "laptop");
            assert_eq!(author.id, id);
            assert_eq!(author.feature_user(), FeatureUser::admin_token_user());
        }
    }
}
