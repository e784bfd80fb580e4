//! The deliberate divergences from Unleash 6.10.1: the cases where our answer is
//! `BEHAVIOUR.md`'s, each with the rule it follows and the status we answer.

/// One recorded case whose answer deliberately differs from Unleash's.
pub struct Divergence {
    /// The case's `name`.
    pub case: &'static str,
    /// The rule of `BEHAVIOUR.md` our answer follows.
    pub rule: &'static str,
    /// The status we answer.
    pub status: u16,
}

/// Every deliberate divergence, one line each.
pub const DIVERGENCES: &[Divergence] = &[];
