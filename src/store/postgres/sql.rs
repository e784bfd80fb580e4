//! The SQL a [`PostgresStore`](super::PostgresStore) runs, with its schema written in.
//!
//! Statements name the schema explicitly rather than relying on `search_path`, so a pooled
//! connection never depends on session state and two stores on different schemas can share a
//! server (tests use one schema each).

/// `name` as a quoted SQL identifier.
pub(super) fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The first key of the gate's advisory lock (the second is the hash of the schema name),
/// "tagt"; the migration lock uses "tadm", so the two never meet.
pub(super) const GATE_CLASS: i32 = 0x7461_6774;

/// Every statement the store prepares, built once per store.
#[derive(Debug)]
pub(super) struct Statements {
    /// The schema's name, unquoted: the parameter of the lock statements.
    pub schema: String,
    /// `$1` collection, `$2` id → value, revision.
    pub get: String,
    /// `$1` collections, `$2` ids → ord (1-based position in the request), value, revision.
    pub get_many: String,
    /// `$1` collection, `$2` lower bound (the prefix), `$3` exclusive upper bound →
    /// collection revision, then id, value, revision (NULL id when there are no records).
    pub list_range: String,
    /// Like `list_range` without an upper bound (empty prefix, or one with no successor).
    pub list_from: String,
    /// `$1` after, `$2` limit → events in id order.
    pub events: String,
    /// A page of the event log, newest first, by which filters are set (bit 0 type, bit 1
    /// project, bit 2 feature); see [`event_page`].
    pub event_pages: [String; 8],
    /// → the store's revision: the highest committed one.
    pub revision: String,
    /// `$1` the schema → the gate, exclusive, for the session: taken by a read that must see
    /// no revision still in flight (a view, a listing, the event log) and let go with
    /// [`gate_release`](Self::gate_release) as soon as its snapshot is taken.
    pub gate_wait: String,
    /// `$1` the schema → let go of [`gate_wait`](Self::gate_wait)'s lock.
    pub gate_release: String,
    /// One change set committed in the caller's transaction, as one statement (the function
    /// `commit_change_set` of migration 5): its key locks, the gate, then its preconditions
    /// checked and, only when they all hold, its writes and events applied as the next
    /// commit. `$1` the schema, `$2` [`GATE_CLASS`], `$3` whether the gate is taken
    /// exclusive, `$4`–`$5` the key locks to take (lock ids in the order they are taken, by
    /// every transaction, so two never wait for each other the wrong way round; each
    /// exclusive for a key written, shared for one only expected at a revision, so commits
    /// that all expect the project, say, do not take turns on it; none when an earlier call
    /// of its batch took them; see `lock_ids.rs`), `$6`–`$8` the preconditions, `$9`–`$14`
    /// the writes, `$15`–`$22` the events, `$23` the channel of a commit notification to
    /// carry (NULL for none) and `$24` the instance it names: the parameters of
    /// [`Plan::params`](super::commit::Plan::params). It answers the position of the first
    /// precondition that fails, or the commit's revision; and when one fails, the records
    /// it expected as they are now (`[collection, id, value, revision]`, the missing ones
    /// left out), so that the instance decides again on them without reading them.
    pub commit: String,
    /// `$1` the channel, `$2` the instance → a commit notification of the latest revision
    /// this transaction sees (its own commits included), sent when it commits: carried by a
    /// batch.
    pub notify_latest: String,
}

impl Statements {
    pub(super) fn new(schema: &str) -> Self {
        let s = quote_identifier(schema);
        let list = |bound: &str| {
            // One statement, so the listing and the collection revision come from one
            // snapshot: the LEFT JOIN keeps the revision row when no record matches.
            format!(
                "SELECT c.revision, r.id, r.value, r.revision \
                 FROM (SELECT coalesce((SELECT max(revision) FROM {s}.collection_changes \
                                        WHERE collection = $1), 0) AS revision) AS c \
                 LEFT JOIN {s}.records r ON r.collection = $1 AND r.id >= $2{bound} \
                 ORDER BY r.id"
            )
        };
        let gate = |function: &str| {
            format!("SELECT {function}({GATE_CLASS}::int4, hashtext($1::text))::text")
        };
        Statements {
            schema: schema.to_owned(),
            get: format!(
                "SELECT value, revision FROM {s}.records WHERE collection = $1 AND id = $2"
            ),
            get_many: format!(
                "SELECT k.ord, r.value, r.revision \
                 FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(collection, id, ord) \
                 JOIN {s}.records r ON r.collection = k.collection AND r.id = k.id"
            ),
            list_range: list(" AND r.id < $3"),
            list_from: list(""),
            events: format!(
                "SELECT id, revision, type, created_by, created_at, project, feature_name, \
                        environment, data, pre_data, created_by_user_id, tags \
                 FROM {s}.events WHERE id > $1::bigint ORDER BY id LIMIT $2::bigint"
            ),
            event_pages: std::array::from_fn(|filters| event_page(&s, filters)),
            revision: format!("SELECT coalesce(max(revision), 0) FROM {s}.commits"),
            gate_wait: gate("pg_advisory_lock"),
            gate_release: gate("pg_advisory_unlock"),
            commit: format!(
                "SELECT failing, revision, current FROM {s}.commit_change_set(\
                     $1::text, $2::int4, $3::bool, $4::int8[], $5::bool[], \
                     $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::jsonb[], \
                     $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], \
                     $17::timestamptz[], $18::text[], $19::text[], $20::text[], $21::jsonb[], \
                     $22::jsonb[], $23::text, $24::text, $25::bigint[], $26::jsonb[])"
            ),
            notify_latest: format!(
                "SELECT pg_notify($1::text, \
                     coalesce((SELECT max(revision) FROM {s}.commits), 0)::text || ' ' || $2::text)"
            ),
        }
    }
}

/// The smallest string greater than every string that starts with `prefix`, in byte order;
/// `None` when there is none (an empty prefix, or one made only of `char::MAX`).
///
/// UTF-8 byte order is code point order, so incrementing the last code point that can be
/// incremented (and dropping what follows it) gives the bound.
pub(super) fn prefix_upper_bound(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match last {
            // Surrogates are not chars: the successor of U+D7FF is U+E000.
            '\u{d7ff}' => Some('\u{e000}'),
            c => char::from_u32(u32::from(c) + 1),
        };
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The page statement for the filters in `filters` (bit 0 type, bit 1 project, bit 2
/// feature), on schema `s` (quoted). Parameters: `$1` type, `$2` project, `$3` feature, `$4`
/// only ids below, `$5` offset, `$6` limit → the total of matches, then an event per row
/// (NULL event columns when the page is empty).
///
/// One statement per combination of filters rather than `(type = $1 OR $1 IS NULL)`: a
/// generic plan for that would not use the filter's index. An absent filter still names
/// its parameter (`$1::text IS NULL`), a constant the planner folds, so that every
/// statement takes the same parameters. The total and the page come from one statement,
/// hence one snapshot; unfiltered, the total is the last event id (ids have no gaps), not a
/// count of the whole table.
fn event_page(s: &str, filters: usize) -> String {
    let columns = [(1, "type"), (2, "project"), (4, "feature_name")];
    let condition = columns
        .iter()
        .enumerate()
        .map(|(i, (bit, column))| {
            let parameter = i + 1;
            if filters & bit != 0 {
                format!("{column} = ${parameter}::text")
            } else {
                format!("${parameter}::text IS NULL")
            }
        })
        .collect::<Vec<_>>()
        .join(" AND ");
    let total = format!("SELECT count(*) AS total FROM {s}.events WHERE {condition}");
    format!(
        "SELECT t.total, e.id, e.revision, e.type, e.created_by, e.created_at, e.project, \
                e.feature_name, e.environment, e.data, e.pre_data, e.created_by_user_id, e.tags \
         FROM ({total}) AS t \
         LEFT JOIN LATERAL ( \
             SELECT * FROM {s}.events WHERE {condition} AND id < $4::bigint \
             ORDER BY id DESC OFFSET $5::bigint LIMIT $6::bigint \
         ) AS e ON true \
         ORDER BY e.id DESC"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_identifier("toggle_admin"), "\"toggle_admin\"");
        assert_eq!(quote_identifier("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn upper_bounds_cover_exactly_the_prefix() {
        assert_eq!(prefix_upper_bound(""), None);
        assert_eq!(prefix_upper_bound("a\u{1f}").as_deref(), Some("a\u{20}"));
        assert_eq!(prefix_upper_bound("ab").as_deref(), Some("ac"));
        assert_eq!(prefix_upper_bound("a\u{10ffff}").as_deref(), Some("b"));
        assert_eq!(prefix_upper_bound("\u{d7ff}").as_deref(), Some("\u{e000}"));
        assert_eq!(prefix_upper_bound("\u{10ffff}"), None);
        for (prefix, inside, outside) in [
            ("ab", "ab\u{10ffff}zz", "ac"),
            ("a\u{1f}", "a\u{1f}x", "ab"),
        ] {
            let upper = prefix_upper_bound(prefix).unwrap();
            assert!(inside.as_bytes() < upper.as_bytes());
            assert!(outside.as_bytes() >= upper.as_bytes());
        }
    }
}
