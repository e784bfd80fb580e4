//! Secrets: how they are made, and the two digests the store keeps of them (see the
//! [`auth`](super) module for why plain SHA-256 digests are safe here).

use sha2::{Digest, Sha256};

/// A fresh secret: `ta_` and 64 hex digits of 256 bits from the OS random source. Fails only
/// when the operating system cannot provide randomness.
pub(crate) fn new_secret() -> Result<String, crate::error::Error> {
    Ok(format!("ta_{}", random_hex()?))
}

/// 64 hex digits of 256 bits from the OS random source.
fn random_hex() -> Result<String, crate::error::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        crate::error::Error::internal(
            format!("the operating system's random source failed: {e}"),
            None,
        )
    })?;
    let mut hex = String::with_capacity(64);
    for byte in bytes {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    Ok(hex)
}

/// A fresh secret of a client key, in Unleash's shape `project:environment.random`: the
/// project is `*` for every project and `[]` for several.
pub(crate) fn new_client_secret(
    projects: &[String],
    environment: &str,
) -> Result<String, crate::error::Error> {
    let project = match projects {
        [one] => one.as_str(),
        _ => "[]",
    };
    Ok(format!("{project}:{environment}.{}", random_hex()?))
}

/// The stored form of a secret: its SHA-256 as lowercase hex.
pub(crate) fn hash_secret(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The verifier of a secret, kept in its key's record and compared in constant time with
/// the presented secret's at authentication: SHA-256 of a domain prefix and the secret, as
/// lowercase hex. The prefix makes it independent of the lookup id ([`hash_secret`]), so a
/// record whose id was reached without knowing the secret still does not verify.
pub(crate) fn verifier_of(secret: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"toggle-admin api key verifier v1\0");
    hasher.update(secret.as_bytes());
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    hex
}

/// Equality of two strings in time that depends only on their lengths.
pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClientKeyType, KeyAccess};

    #[test]
    fn secrets_are_long_random_and_hashed() {
        let a = new_secret().unwrap();
        let b = new_secret().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 3 + 64);
        let hash = hash_secret(&a);
        assert_eq!(hash.len(), 64);
        assert_ne!(hash, a);
        assert_eq!(hash, hash_secret(&a));
        assert_eq!(
            hash_secret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn client_secrets_have_unleash_shape() {
        let all = new_client_secret(&["*".to_owned()], "production").unwrap();
        assert!(all.starts_with("*:production."), "{all}");
        assert_eq!(all.len(), "*:production.".len() + 64);
        let one = new_client_secret(&["web".to_owned()], "dev").unwrap();
        assert!(one.starts_with("web:dev."), "{one}");
        let several = new_client_secret(&["a".to_owned(), "b".to_owned()], "dev").unwrap();
        assert!(several.starts_with("[]:dev."), "{several}");
        assert_eq!(
            KeyAccess::client(vec![], "dev"),
            KeyAccess::Client {
                token_type: ClientKeyType::Client,
                projects: vec!["*".to_owned()],
                environment: "dev".to_owned()
            }
        );
    }

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq("abc", "abc"));
        assert!(!constant_time_eq("abc", "abd"));
        assert!(!constant_time_eq("abc", "ab"));
    }

    #[test]
    fn verifiers_differ_from_lookup_ids() {
        let secret = new_secret().unwrap();
        assert_ne!(verifier_of(&secret), hash_secret(&secret));
        assert_eq!(verifier_of(&secret), verifier_of(&secret));
        let mut other = secret.clone();
        other.pop();
        other.push('!');
        assert_ne!(verifier_of(&secret), verifier_of(&other));
    }
}
