//! The playground as a list a person pages through (what
//! [`ToggleAdmin::playground_page`](crate::ToggleAdmin::playground_page) answers): the flags
//! whose name holds a text, how many of them a context gets enabled, and one page of them
//! explained.

use serde::{Deserialize, Serialize};

use super::PlaygroundFeature;

/// The most flags one playground page may explain; a larger `limit` is lowered to it.
pub const MAX_PLAYGROUND_PAGE: usize = 500;

/// Which of the playground's flags
/// [`ToggleAdmin::playground_page`](crate::ToggleAdmin::playground_page) explains.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaygroundPageQuery {
    /// Only flags whose name contains this text (trimmed), compared without regard to case;
    /// all of them when `None` or blank.
    pub search: Option<String>,
    /// How many matching flags to skip (in the playground's order).
    pub offset: usize,
    /// How many to explain at most (at most [`MAX_PLAYGROUND_PAGE`]).
    pub limit: usize,
}

/// One page of the playground.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlaygroundPage {
    /// How many flags match in all (the page holds at most `limit` of them).
    pub total: usize,
    /// How many of the matching flags are enabled for the context.
    pub enabled: usize,
    /// The page: each flag as [`ToggleAdmin::playground`](crate::ToggleAdmin::playground)
    /// answers it, in the same order.
    pub features: Vec<PlaygroundFeature>,
}
