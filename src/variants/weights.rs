//! Unleash's weight distribution (its `fixVariantWeights`): the variable variants share what
//! the fixed ones leave of 1000.

use crate::error::{Error, ErrorDetail};
use crate::model::{StrategyVariant, Variant, WeightType};

/// The total every non-empty list of variants is distributed to.
pub(super) const TOTAL_WEIGHT: u32 = 1000;

/// Unleash's exact message when a non-empty list has no variable variant.
pub(super) const NO_VARIABLE_VARIANT: &str = r#"There must be at least one "variable" variant"#;

/// A variant whose weight can be distributed: environment- or strategy-level.
pub(super) trait Weighted {
    /// How the weight is decided; environment variants without one count as variable.
    fn weight_type(&self) -> WeightType;
    /// The current weight.
    fn weight(&self) -> u32;
    /// Sets the weight.
    fn set_weight(&mut self, weight: u32);
}

impl Weighted for Variant {
    fn weight_type(&self) -> WeightType {
        self.weight_type.unwrap_or(WeightType::Variable)
    }
    fn weight(&self) -> u32 {
        self.weight
    }
    fn set_weight(&mut self, weight: u32) {
        self.weight = weight;
    }
}

impl Weighted for StrategyVariant {
    fn weight_type(&self) -> WeightType {
        self.weight_type
    }
    fn weight(&self) -> u32 {
        self.weight
    }
    fn set_weight(&mut self, weight: u32) {
        self.weight = weight;
    }
}

/// Distributes the weights of a list of variants exactly as Unleash does, keeping their order.
///
/// * An empty list stays empty.
/// * A non-empty list without a variable variant fails with
///   `There must be at least one "variable" variant` (checked before the sum).
/// * Fixed variants keep their weight. When the fixed weights total more than 1000 it fails
///   with `The fixed weights total <n>, more than 1000`; exactly 1000 is allowed and leaves 0
///   to every variable variant.
/// * The variable variants share what is left of 1000 evenly; the remainder goes, one each, to
///   the first variable variants in the input order. Their incoming weights are ignored.
///
/// The result of a non-empty list therefore always totals exactly 1000. The order is left as
/// given; Unleash sorts afterwards ([`sort_by_name`](super::sort_by_name)).
///
/// Errors are [`Error::Validation`] whose one detail has the path `""` (the whole list).
///
/// Where we differ from Unleash: a variant without `weightType` counts as variable (Unleash
/// drops it from the list), and the message for fixed weights over 1000 says what is wrong
/// (Unleash says `The traffic distribution total must equal 100%`).
pub fn distribute_weights(mut variants: Vec<Variant>) -> Result<Vec<Variant>, Error> {
    distribute(&mut variants, "")?;
    Ok(variants)
}

/// [`distribute_weights`] on any kind of variant; errors carry the path `at`.
pub(super) fn distribute<T: Weighted>(items: &mut [T], at: &str) -> Result<(), Error> {
    if items.is_empty() {
        return Ok(());
    }
    let variable = items
        .iter()
        .filter(|item| item.weight_type() == WeightType::Variable)
        .count();
    if variable == 0 {
        return Err(Error::validation(
            NO_VARIABLE_VARIANT,
            vec![ErrorDetail::at(at, NO_VARIABLE_VARIANT)],
        ));
    }
    let fixed: u64 = items
        .iter()
        .filter(|item| item.weight_type() == WeightType::Fix)
        .map(|item| u64::from(item.weight()))
        .sum();
    let Some(rest) = u64::from(TOTAL_WEIGHT).checked_sub(fixed) else {
        let message = format!("The fixed weights total {fixed}, more than {TOTAL_WEIGHT}");
        return Err(Error::validation(
            message.clone(),
            vec![ErrorDetail::at(at, message)],
        ));
    };
    // `variable` ≥ 1 and `rest` ≤ 1000, so both shares fit in u32.
    let variable = u64::try_from(variable).unwrap_or(u64::MAX);
    let base = rest / variable;
    let remainder = rest % variable;
    let variables = items
        .iter_mut()
        .filter(|item| item.weight_type() == WeightType::Variable);
    for (position, item) in (0u64..).zip(variables) {
        let share = base + u64::from(position < remainder);
        item.set_weight(u32::try_from(share).unwrap_or(TOTAL_WEIGHT));
    }
    Ok(())
}
