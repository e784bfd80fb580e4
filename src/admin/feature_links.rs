//! Feature links: web addresses attached to a flag (its issue, its dashboard): add, change,
//! remove. A feature's links show in its `links` (see `features.rs`).

use serde::Serialize;

use super::records::{FeatureLinksRecord, encode, feature_links_key};
use super::{Authority, Need, ToggleAdmin, Tx};
use crate::error::{Error, Result};
use crate::model::{FeatureLink, NewFeatureLink, Permission};
use crate::store::Json;

/// The longest address a link may have.
const MAX_LINK_URL: usize = 2048;

impl ToggleAdmin {
    /// Add a link to `feature` of `project`: `POST
    /// /api/admin/projects/{projectId}/features/{featureName}/link`. Needs `UPDATE_FEATURE`
    /// in the project. Returns the link with its new id.
    ///
    /// The address must be `http://…` or `https://…` with a host (`https://` is put in front
    /// of one without a scheme, as Unleash does), at most 2,048 characters: else a 400 at
    /// `url`. A missing project or feature is a 404 (Unleash 6.10.1 answers 500 for a
    /// missing flag). Event `feature-link-added` with `{url, title}`.
    pub async fn add_feature_link<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        link: &NewFeatureLink,
    ) -> Result<FeatureLink> {
        let permit = self.admit(authority.into(), &link_needs(project)).await?;
        let url = link_url(&link.url)?;
        let (url, title) = (&url, &link.title);
        self.change("add_feature_link", permit, |tx| {
            Box::pin(async move {
                let mut links = read_links(tx, project, feature).await?;
                let added = FeatureLink {
                    id: uuid::Uuid::new_v4().to_string(),
                    url: url.clone(),
                    title: title.clone(),
                };
                links.links.push(added.clone());
                write_links(tx, feature, &links)?;
                tx.record(
                    "feature-link-added",
                    Some(project),
                    Some(feature),
                    None,
                    None,
                    Some(Json::of(&LinkData::of(&added))),
                );
                Ok(added)
            })
        })
        .await
    }

    /// Change the address and title of the link `id` of `feature`: `PUT …/link/{linkId}`.
    /// Needs `UPDATE_FEATURE` in the project. The rules of
    /// [`add_feature_link`](Self::add_feature_link); a link the feature does not have is a
    /// 404. Event `feature-link-updated` with the link before and after (a change that
    /// changes nothing writes nothing).
    pub async fn update_feature_link<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        id: &str,
        link: &NewFeatureLink,
    ) -> Result<FeatureLink> {
        let permit = self.admit(authority.into(), &link_needs(project)).await?;
        let url = link_url(&link.url)?;
        let (url, title) = (&url, &link.title);
        self.change("update_feature_link", permit, |tx| {
            Box::pin(async move {
                let mut links = read_links(tx, project, feature).await?;
                let Some(found) = links.links.iter_mut().find(|l| l.id == id) else {
                    return Err(link_not_found(id));
                };
                let before = found.clone();
                found.url.clone_from(url);
                found.title.clone_from(title);
                let after = found.clone();
                if after == before {
                    return Ok(after);
                }
                write_links(tx, feature, &links)?;
                tx.record(
                    "feature-link-updated",
                    Some(project),
                    Some(feature),
                    None,
                    Some(Json::of(&LinkData::of(&before))),
                    Some(Json::of(&LinkData::of(&after))),
                );
                Ok(after)
            })
        })
        .await
    }

    /// Remove the link `id` of `feature`: `DELETE …/link/{linkId}`. Needs `UPDATE_FEATURE`
    /// in the project. A link the feature does not have is a 404, as in Unleash. Event
    /// `feature-link-removed` with the link as `preData`.
    pub async fn delete_feature_link<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        id: &str,
    ) -> Result<()> {
        let permit = self.admit(authority.into(), &link_needs(project)).await?;
        self.change("delete_feature_link", permit, |tx| {
            Box::pin(async move {
                let mut links = read_links(tx, project, feature).await?;
                let Some(at) = links.links.iter().position(|l| l.id == id) else {
                    return Err(link_not_found(id));
                };
                let removed = links.links.remove(at);
                write_links(tx, feature, &links)?;
                tx.record(
                    "feature-link-removed",
                    Some(project),
                    Some(feature),
                    None,
                    Some(Json::of(&LinkData::of(&removed))),
                    None,
                );
                Ok(())
            })
        })
        .await
    }
}

/// `UPDATE_FEATURE` in `project`.
fn link_needs(project: &str) -> [Need<'_>; 1] {
    [Need::project(Permission::UpdateFeature, project)]
}

/// A link as Unleash's link events carry it: `{url, title}`.
#[derive(Serialize)]
struct LinkData<'a> {
    url: &'a str,
    title: Option<&'a str>,
}

impl<'a> LinkData<'a> {
    fn of(link: &'a FeatureLink) -> Self {
        Self {
            url: &link.url,
            title: link.title.as_deref(),
        }
    }
}

fn link_not_found(id: &str) -> Error {
    Error::not_found(format!("Could not find link with id {id}"))
}

/// The links of `feature` of `project`, read through `tx` (404 unless the feature is there).
async fn read_links(tx: &Tx<'_>, project: &str, feature: &str) -> Result<FeatureLinksRecord> {
    let (_, links) = tx
        .reader()
        .feature_with(project, feature, feature_links_key(feature))
        .await?;
    Ok(links)
}

/// Write a feature's links: the record goes with the last link.
fn write_links(tx: &mut Tx<'_>, feature: &str, links: &FeatureLinksRecord) -> Result<()> {
    let key = feature_links_key(feature);
    if links.links.is_empty() {
        tx.delete(key);
    } else {
        let record = encode(&key, links)?;
        tx.put(key, record);
    }
    Ok(())
}

/// `url` as a link keeps it: trimmed, with `https://` in front when it has no scheme; a 400
/// at `url` unless it is an `http` or `https` address with a host.
fn link_url(url: &str) -> Result<String> {
    let invalid = |why: &str| Error::invalid_at("url", format!("Invalid URL: {url} ({why})"));
    let trimmed = url.trim();
    if trimmed.is_empty() {
        return Err(invalid("an address is required"));
    }
    if trimmed.chars().count() > MAX_LINK_URL {
        return Err(invalid("longer than 2048 characters"));
    }
    if trimmed.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("it contains spaces or control characters"));
    }
    let (scheme, rest) = match trimmed.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => {
            // `mailto:x`, `javascript:…`: a scheme without `//`; `host:8080` is a port.
            let head = trimmed.split(['/', '?', '#']).next().unwrap_or_default();
            if let Some((_, after)) = head.split_once(':')
                && !after.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(invalid("only http and https addresses are links"));
            }
            ("https".to_owned(), trimmed)
        }
    };
    if scheme != "http" && scheme != "https" {
        return Err(invalid("only http and https addresses are links"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host.split(':').next().unwrap_or_default();
    let host_ok = !host.is_empty()
        && (host.starts_with('[')
            || host
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '.' || c == '_'));
    if !host_ok {
        return Err(invalid("it has no host"));
    }
    Ok(format!("{scheme}://{rest}"))
}

#[cfg(test)]
mod tests {
    use super::link_url;

    #[test]
    fn links_are_http_addresses_with_a_host() {
        assert_eq!(
            link_url(" https://example.com/a ").unwrap(),
            "https://example.com/a"
        );
        assert_eq!(link_url("HTTP://x.io").unwrap(), "http://x.io");
        assert_eq!(
            link_url("example.com/x?q=1").unwrap(),
            "https://example.com/x?q=1"
        );
        assert_eq!(
            link_url("localhost:8080/x").unwrap(),
            "https://localhost:8080/x"
        );
        for bad in [
            "",
            "ftp://x.io",
            "javascript:alert(1)",
            "mailto:a@b.c",
            "https://",
            "https:///path",
            "https://exa mple.com",
            "http://a b",
        ] {
            assert!(link_url(bad).is_err(), "{bad}");
        }
    }
}
