//! The playground a page at a time: the flags whose name holds a text, how many of them a
//! context gets enabled, and only one page of them explained.
//!
//! Explaining a flag compiles a probe for each of its strategies, constraints and segments
//! and reads its feature-environment record; with thousands of flags that is most of what
//! the whole playground costs. A verdict is the frontend API's cached engine asked once. So
//! the name filter comes first, every matching flag gets its verdict (the count of enabled
//! ones covers them all), and only the page's flags are explained.

use super::playground::Evaluation;
use super::playground_explain::DependencyProbe;
use super::{Authority, ToggleAdmin};
use crate::error::Result;
use crate::model::{MAX_PLAYGROUND_PAGE, PlaygroundPage, PlaygroundPageQuery, PlaygroundRequest};

impl ToggleAdmin {
    /// One page of [`playground`](Self::playground)'s answer: of the flags whose name holds
    /// `query.search` (without regard to case), how many there are and how many are enabled
    /// for the context, and `query.limit` of them (at most [`MAX_PLAYGROUND_PAGE`]) from
    /// `query.offset` on, each exactly as `playground` answers it and in its order. An offset
    /// past the end gives an empty page with the counts.
    ///
    /// Who may ask and which requests are refused are as for `playground`. Only the page's
    /// flags are explained and only their feature-environment records are read, so a page
    /// costs about the same however many flags the projects hold, apart from one verdict
    /// for each flag that matches.
    pub async fn playground_page<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        request: &PlaygroundRequest,
        query: &PlaygroundPageQuery,
    ) -> Result<PlaygroundPage> {
        self.admit(authority.into(), &[]).await?;
        let (context, scope) = self.playground_request(request).await?;
        let evaluator = self.frontend_evaluator(scope.clone(), &context).await?;
        let needle = query
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_lowercase);
        let limit = query.limit.min(MAX_PLAYGROUND_PAGE);
        let (mut total, mut enabled) = (0usize, 0usize);
        // The page's flags by their place in the document, which `playground` answers in.
        let mut page: Vec<usize> = Vec::new();
        for (i, feature) in evaluator.features().iter().enumerate() {
            if needle
                .as_deref()
                .is_some_and(|n| !feature.name.to_lowercase().contains(n))
            {
                continue;
            }
            if evaluator.enabled(feature) {
                enabled += 1;
            }
            if total >= query.offset && page.len() < limit {
                page.push(i);
            }
            total += 1;
        }
        let features = evaluator.features();
        let chosen = || page.iter().filter_map(|&i| features.get(i));
        let explainers = self
            .playground_explainers(&scope.environment, chosen())
            .await?;
        let dependencies =
            DependencyProbe::build(evaluator.document(), chosen().map(|f| f.name.as_str()));
        let evaluation = Evaluation {
            evaluator,
            explainers,
            dependencies,
        };
        let features = page
            .iter()
            .zip(&evaluation.explainers)
            .map(|(&i, explainer)| evaluation.feature(i, explainer))
            .collect();
        Ok(PlaygroundPage {
            total,
            enabled,
            features,
        })
    }
}
