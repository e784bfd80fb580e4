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
pub const DIVERGENCES: &[Divergence] = &[
    Divergence {
        case: "vp/remove-field-stickiness",
        rule: "BEHAVIOUR.md §1: a variant without stickiness is stored with stickiness \"default\" (Unleash leaves it out)",
        status: 200,
    },
    Divergence {
        case: "vp/stickiness-missing",
        rule: "BEHAVIOUR.md §1: a variant without stickiness is stored with stickiness \"default\" (Unleash leaves it out)",
        status: 200,
    },
    Divergence {
        case: "vp/weighttype-missing-only",
        rule: "BEHAVIOUR.md §1: a variant without weightType is variable (Unleash drops it, then finds no variable variant: 400)",
        status: 200,
    },
    Divergence {
        case: "vp/add-index-out-of-range",
        rule: "BEHAVIOUR.md §1: RFC 6902 strictly, an index past the end is a 400 (Unleash appends)",
        status: 400,
    },
    Divergence {
        case: "vp/weight-string",
        rule: "BEHAVIOUR.md §1: a weight given as a string is an error, not a number (Unleash stores the string)",
        status: 400,
    },
    Divergence {
        case: "vp/unknown-project",
        rule: "BEHAVIOUR.md §1: the project in the path is checked, an unknown one is a 404 (Unleash ignores it and writes)",
        status: 404,
    },
    Divergence {
        case: "export/client-token",
        rule: "BEHAVIOUR.md §Auth and permissions: keys are admin keys or act as a user (no client tokens); a key with no grants may read, so it may export",
        status: 200,
    },
    Divergence {
        case: "import/duplicate-features-in-payload",
        rule: "BEHAVIOUR.md §2: validate everything first; all problems, duplicate feature names included, in one 400 (Unleash: 409)",
        status: 400,
    },
    Divergence {
        case: "import/strategy-for-feature-not-in-features",
        rule: "BEHAVIOUR.md §2: sub-list entries naming a feature not in data.features are listed in the one 400 (Unleash: 404 mid-transaction)",
        status: 400,
    },
    Divergence {
        case: "import/fenv-for-feature-not-in-features",
        rule: "BEHAVIOUR.md §2: sub-list entries naming a feature not in data.features are listed in the one 400 (Unleash: 404 mid-transaction)",
        status: 400,
    },
    Divergence {
        case: "import/project-number",
        rule: "BEHAVIOUR.md §rule of thumb: bad input Unleash silently mangles (a number coerced to the project \"5\") gets a clear 400",
        status: 400,
    },
    Divergence {
        case: "validate/unknown-project",
        rule: "BEHAVIOUR.md §2: validate_import runs the same validation as import, so it reports the missing project (Unleash: no error)",
        status: 200,
    },
    Divergence {
        case: "app/create-bad-field-type",
        rule: "BEHAVIOUR.md §rule of thumb: bad input Unleash silently mangles (numbers stored as strings) gets a clear 400",
        status: 400,
    },
    Divergence {
        case: "access/put-default",
        rule: "BEHAVIOUR.md §4: the project access endpoint exists here (Unleash OSS: 404); this body is not {roles: [{id, users, groups}]} → 400",
        status: 400,
    },
    Divergence {
        case: "access/put-unknown-project",
        rule: "BEHAVIOUR.md §4 and the order of checks: the endpoint exists here; the body's shape (400) is checked before existence (404)",
        status: 400,
    },
    Divergence {
        case: "access/get-default",
        rule: "BEHAVIOUR.md §4: the project access endpoint exists here (Unleash OSS: 404); project_access reads the assignment back",
        status: 200,
    },
    Divergence {
        case: "access/post-default-roles",
        rule: "BEHAVIOUR.md §4: the project access endpoint exists here (PUT and GET); another method on it is 405 (Unleash OSS: 404)",
        status: 405,
    },
];
