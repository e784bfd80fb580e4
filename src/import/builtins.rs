//! What every Unleash installation has without storing it: the built-in strategy
//! definitions, context fields and tag type. Stores hold only custom ones; reads merge these
//! in.

use crate::model::{ContextField, StrategyDefinition, StrategyParameter, TagType};

/// The tag type every installation has.
pub const SIMPLE_TAG_TYPE: &str = "simple";

/// Unleash's built-in strategy definitions, by name.
pub fn strategy_definitions() -> Vec<StrategyDefinition> {
    let param = |name: &str, kind: &str, description: &str, required: bool| StrategyParameter {
        name: name.to_owned(),
        parameter_type: kind.to_owned(),
        description: Some(description.to_owned()),
        required,
    };
    let rollout = || param("percentage", "percentage", "", false);
    let group = || {
        param(
            "groupId",
            "string",
            "Used to define a activation groups, which allows you to correlate across feature toggles.",
            true,
        )
    };
    let definition =
        |name: &str, display: &str, description: &str, parameters| StrategyDefinition {
            name: name.to_owned(),
            display_name: Some(display.to_owned()),
            title: None,
            description: Some(description.to_owned()),
            editable: false,
            deprecated: false,
            parameters,
        };
    vec![
        definition(
            "applicationHostname",
            "Hosts",
            "Active for client instances with a hostName in the hostNames-list.",
            vec![param(
                "hostNames",
                "list",
                "List of hostnames to enable the feature toggle for.",
                false,
            )],
        ),
        definition(
            "default",
            "Standard",
            "This strategy turns on / off for your entire userbase.",
            vec![],
        ),
        definition(
            "flexibleRollout",
            "Gradual rollout",
            "Roll out to a percentage of your userbase and ensure that the experience is the same for the user on each visit.",
            vec![
                param("rollout", "percentage", "", false),
                param(
                    "stickiness",
                    "string",
                    "Used define stickiness. Possible values: default, userId, sessionId, random",
                    true,
                ),
                group(),
            ],
        ),
        definition(
            "gradualRolloutRandom",
            "Randomized",
            "Randomly activate the feature toggle. No stickiness.",
            vec![rollout()],
        ),
        definition(
            "gradualRolloutSessionId",
            "Sessions",
            "Gradually activate feature toggle. Stickiness based on session id.",
            vec![rollout(), group()],
        ),
        definition(
            "gradualRolloutUserId",
            "Users",
            "Gradually activate feature toggle for logged in users. Stickiness based on user id.",
            vec![rollout(), group()],
        ),
        definition(
            "remoteAddress",
            "IPs",
            "Active for remote addresses defined in the IPs list.",
            vec![param(
                "IPs",
                "list",
                "List of IPs to enable the feature toggle for.",
                true,
            )],
        ),
        definition(
            "userWithId",
            "UserIDs",
            "Active for users with a userId defined in the userIds-list",
            vec![param("userIds", "list", "", false)],
        ),
    ]
}

/// Whether `name` is a built-in strategy definition.
pub fn is_builtin_strategy(name: &str) -> bool {
    matches!(
        name,
        "default"
            | "userWithId"
            | "gradualRolloutRandom"
            | "gradualRolloutSessionId"
            | "gradualRolloutUserId"
            | "applicationHostname"
            | "remoteAddress"
            | "flexibleRollout"
    )
}

/// Unleash's built-in context fields, with the descriptions and sort order its exports carry.
pub fn context_fields() -> Vec<ContextField> {
    [
        (
            "environment",
            "Allows you to constrain on application environment",
            0,
        ),
        ("userId", "Allows you to constrain on userId", 1),
        ("appName", "Allows you to constrain on application name", 2),
        ("currentTime", "Allows you to constrain on date values", 3),
        ("sessionId", "Allows you to constrain on sessionId", 4),
        (
            "remoteAddress",
            "Allows you to constrain on remoteAddress",
            5,
        ),
    ]
    .into_iter()
    .map(|(name, description, sort_order)| ContextField {
        name: name.to_owned(),
        description: Some(Some(description.to_owned())),
        stickiness: Some(false),
        sort_order: Some(sort_order),
        legal_values: Some(Vec::new()),
        ..ContextField::default()
    })
    .collect()
}

/// Whether `name` is a built-in context field.
pub fn is_builtin_context_field(name: &str) -> bool {
    matches!(
        name,
        "environment" | "userId" | "appName" | "currentTime" | "sessionId" | "remoteAddress"
    )
}

/// The built-in tag type `simple`, as Unleash exports it.
pub fn tag_types() -> Vec<TagType> {
    vec![TagType {
        name: SIMPLE_TAG_TYPE.to_owned(),
        description: Some("Used to simplify filtering of features".to_owned()),
        icon: Some(Some("#".to_owned())),
        color: Some(Some("#FFFFFF".to_owned())),
        ..TagType::default()
    }]
}
