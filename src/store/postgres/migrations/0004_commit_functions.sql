-- Migration 4: a commit is one statement. Runs with search_path set to the store's schema.
--
-- Until now a commit was BEGIN, the key locks, the gate, the change set's statement and
-- COMMIT: five statements and two round trips. These functions run the same steps inside
-- one statement, so that a change set committing alone is one round trip and one statement
-- in its own transaction (autocommit), and a batch is the locks and gate, then one call per
-- change set. See the rustdoc of `store/postgres/commit.rs`.
--
-- Both functions are VOLATILE (the default), so each statement in them takes a fresh READ
-- COMMITTED snapshot: the change set's statement, run once the key locks are held, sees
-- every commit of those keys that ended while this one waited for them. `SET search_path
-- FROM CURRENT` binds their table and sequence names to this schema.

-- One change set's preconditions checked and, only when they all hold, its writes and
-- events applied as the next commit; the caller holds the locks of its keys and the gate.
-- Answers the position of the first failing precondition, or the commit's revision; and
-- when one fails, the records the change set expected as they are now
-- (`[collection, id, value, revision]`, missing ones left out).
--
-- The revision and the event ids come from sequences, taken only when the preconditions
-- hold. Every data-modifying part reads `go`, which is empty when a precondition fails, so
-- such a change set writes nothing. Every row source is an array parameter, never
-- `generate_series(n)`, whose generic-plan estimate (1,000 rows) would have PostgreSQL plan
-- the statement afresh on every call.
CREATE FUNCTION apply_change_set(
    check_collections text[], check_ids text[], check_revisions bigint[],
    put_collections text[], put_ids text[], put_values jsonb[],
    delete_collections text[], delete_ids text[], touched text[],
    event_types text[], event_created_by text[], event_created_at timestamptz[],
    event_projects text[], event_features text[], event_environments text[],
    event_data jsonb[], event_pre_data jsonb[],
    OUT failing bigint, OUT revision bigint, OUT current jsonb)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
    WITH failing AS (
        SELECT p.ord FROM unnest(check_collections, check_ids, check_revisions)
            WITH ORDINALITY AS p(collection, id, revision, ord)
        WHERE CASE WHEN p.id IS NULL THEN
            coalesce((SELECT max(c.revision) FROM collection_changes c
                      WHERE c.collection = p.collection), 0) > p.revision
        ELSE
            coalesce((SELECT r.revision FROM records r
                      WHERE r.collection = p.collection AND r.id = p.id), 0) <> p.revision
        END
        ORDER BY p.ord LIMIT 1
    ), go AS (
        SELECT nextval('revisions') AS revision
        WHERE NOT EXISTS (SELECT 1 FROM failing)
    ), ids AS (
        SELECT nextval('event_ids') AS id FROM go, unnest(event_types)
    ), numbered AS (
        SELECT id, row_number() OVER (ORDER BY id) AS ord FROM ids
    ), put AS (
        INSERT INTO records (collection, id, value, revision)
        SELECT w.collection, w.id, w.value, go.revision
        FROM go, unnest(put_collections, put_ids, put_values) AS w(collection, id, value)
        ON CONFLICT (collection, id)
        DO UPDATE SET value = excluded.value, revision = excluded.revision
    ), del AS (
        DELETE FROM records r
        USING go, unnest(delete_collections, delete_ids) AS d(collection, id)
        WHERE r.collection = d.collection AND r.id = d.id
        RETURNING r.collection
    ), bump AS (
        INSERT INTO collection_changes (collection, revision)
        SELECT t.collection, go.revision
        FROM go, (SELECT unnest(touched) UNION SELECT collection FROM del) AS t(collection)
    ), ev AS (
        INSERT INTO events (id, revision, type, created_by, created_at, project,
                            feature_name, environment, data, pre_data)
        SELECT n.id, go.revision, e.type, e.created_by, e.created_at, e.project,
               e.feature_name, e.environment, e.data, e.pre_data
        FROM go, unnest(event_types, event_created_by, event_created_at, event_projects,
                        event_features, event_environments, event_data, event_pre_data)
            WITH ORDINALITY AS e(type, created_by, created_at, project, feature_name,
                                 environment, data, pre_data, ord)
        JOIN numbered n ON n.ord = e.ord
    ), done AS (
        INSERT INTO commits (revision) SELECT go.revision FROM go RETURNING commits.revision
    )
    SELECT (SELECT f.ord FROM failing f), (SELECT d.revision FROM done d),
           (SELECT jsonb_agg(jsonb_build_array(r.collection, r.id, r.value, r.revision))
            FROM unnest(check_collections, check_ids) AS k(collection, id)
            JOIN records r ON r.collection = k.collection AND r.id = k.id
            WHERE EXISTS (SELECT 1 FROM failing))
    INTO apply_change_set.failing, apply_change_set.revision, apply_change_set.current;
END
$$;

-- A change set committed alone, in the caller's transaction (a statement of its own in
-- autocommit: then the call is the whole transaction). First the transaction-scoped
-- advisory locks of its keys, in one order (by lock id, a hash of the schema's name
-- `store`, the collection and the id): exclusive for a key it writes, shared for one it
-- only expects; then the gate (`gate_class`, the hash of `store`), exclusive when the change
-- set has a collection precondition; then `apply_change_set`. When it commits and
-- `notify_channel` is set, it also sends the store's commit notification
-- (`revision instance`) in its own transaction, which costs no transaction of its own.
CREATE FUNCTION commit_change_set(
    store text, gate_class integer, exclusive_gate boolean,
    lock_collections text[], lock_ids text[], lock_written boolean[],
    check_collections text[], check_ids text[], check_revisions bigint[],
    put_collections text[], put_ids text[], put_values jsonb[],
    delete_collections text[], delete_ids text[], touched text[],
    event_types text[], event_created_by text[], event_created_at timestamptz[],
    event_projects text[], event_features text[], event_environments text[],
    event_data jsonb[], event_pre_data jsonb[], notify_channel text, notify_instance text,
    OUT failing bigint, OUT revision bigint, OUT current jsonb)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
#variable_conflict use_column
BEGIN
    -- The subquery hands its lock ids over in order, and the aggregate takes them one row
    -- at a time, in that order.
    PERFORM count(CASE WHEN k.exclusive THEN pg_advisory_xact_lock(k.id)::text
                       ELSE pg_advisory_xact_lock_shared(k.id)::text END)
    FROM (
        SELECT hashtextextended(store || chr(31) || u.collection || chr(31) || u.id, 0) AS id,
               bool_or(u.exclusive) AS exclusive
        FROM unnest(lock_collections, lock_ids, lock_written) AS u(collection, id, exclusive)
        GROUP BY 1 ORDER BY 1
    ) AS k;
    IF exclusive_gate THEN
        PERFORM pg_advisory_xact_lock(gate_class, hashtext(store));
    ELSE
        PERFORM pg_advisory_xact_lock_shared(gate_class, hashtext(store));
    END IF;
    SELECT a.failing, a.revision, a.current
    INTO commit_change_set.failing, commit_change_set.revision, commit_change_set.current
    FROM apply_change_set(check_collections, check_ids, check_revisions,
                          put_collections, put_ids, put_values,
                          delete_collections, delete_ids, touched,
                          event_types, event_created_by, event_created_at,
                          event_projects, event_features, event_environments,
                          event_data, event_pre_data) AS a;
    IF notify_channel IS NOT NULL AND commit_change_set.revision IS NOT NULL THEN
        PERFORM pg_notify(notify_channel, commit_change_set.revision::text || ' ' || notify_instance);
    END IF;
END
$$;
