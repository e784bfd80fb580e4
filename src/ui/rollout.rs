//! A feature environment's rollout in one line, for people: "25 % of users where country is
//! NO or SE". It describes the configuration as stored; evaluating it is the SDKs' (and the
//! playground's) business.

use super::constraints::describe;
use super::strategy_form::{FLEXIBLE_ROLLOUT, share};
use crate::model::{FeatureStrategy, Segment};

/// The environment's state and strategies in one line.
pub(crate) fn summary(
    enabled: bool,
    strategies: &[FeatureStrategy],
    segments: &[Segment],
) -> String {
    if !enabled {
        return "Off.".to_owned();
    }
    if strategies.is_empty() {
        return "On, with no strategy.".to_owned();
    }
    let live: Vec<String> = strategies
        .iter()
        .filter(|s| !s.is_disabled())
        .map(|s| strategy(s, segments))
        .collect();
    if live.is_empty() {
        return "On, but every strategy is disabled.".to_owned();
    }
    format!("On: {}.", live.join("; or "))
}

/// Who one strategy lets in, and on what conditions.
pub(crate) fn strategy(s: &FeatureStrategy, segments: &[Segment]) -> String {
    let parameter = |name: &str| s.parameters.get(name).cloned().unwrap_or_default();
    let list = |name: &str| {
        parameter(name)
            .split(',')
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let who = match s.name.as_str() {
        FLEXIBLE_ROLLOUT => share(&parameter("rollout"), &parameter("stickiness")),
        "default" => "everyone".to_owned(),
        "userWithId" => format!("the users {}", list("userIds")),
        "gradualRolloutUserId" => share(&parameter("percentage"), "userId"),
        "gradualRolloutSessionId" => share(&parameter("percentage"), "sessionId"),
        "gradualRolloutRandom" => share(&parameter("percentage"), "random"),
        "applicationHostname" => format!("the hosts {}", list("hostNames")),
        "remoteAddress" => format!("the addresses {}", list("IPs")),
        other => {
            let params: Vec<String> = s
                .parameters
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            if params.is_empty() {
                format!("whom {other} lets in")
            } else {
                format!("whom {other} lets in ({})", params.join(", "))
            }
        }
    };
    let mut conditions: Vec<String> = s.constraints.iter().map(describe).collect();
    for id in &s.segments {
        let name = segments.iter().find(|g| g.id == *id).map_or_else(
            || format!("segment {id}"),
            |g| format!("segment {}", g.name),
        );
        conditions.push(format!("in {name}"));
    }
    if conditions.is_empty() {
        who
    } else {
        format!("{who} where {}", conditions.join(" and "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Constraint, Operator};

    #[test]
    fn a_rollout_with_a_constraint_reads_as_a_sentence() {
        let mut s = FeatureStrategy::new(FLEXIBLE_ROLLOUT)
            .with_parameter("rollout", "25")
            .with_parameter("stickiness", "default");
        s.constraints.push(Constraint {
            context_name: "country".into(),
            operator: Operator::In,
            case_insensitive: None,
            inverted: None,
            values: Some(vec!["NO".into(), "SE".into()]),
            value: None,
        });
        assert_eq!(
            summary(true, &[s.clone()], &[]),
            "On: 25 % of users where country is NO or SE."
        );
        s.segments.push(7);
        let beta = Segment {
            id: 7,
            name: "beta".into(),
            description: None,
            project: None,
            constraints: vec![],
            created_at: None,
            created_by: None,
        };
        let everyone = FeatureStrategy::new("default");
        assert_eq!(
            summary(true, &[s, everyone], &[beta]),
            "On: 25 % of users where country is NO or SE and in segment beta; or everyone."
        );
        assert_eq!(summary(false, &[], &[]), "Off.");
    }
}
