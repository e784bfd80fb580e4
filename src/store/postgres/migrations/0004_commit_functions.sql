-- Migration 4: a commit is one statement. Runs with search_path set to the store's schema.
--
-- Until now a commit was BEGIN, the key locks, the gate, the change set's statement and
-- COMMIT, in two round trips. The function below runs the middle three as one statement, so
-- that a change set committed alone is BEGIN, one call and COMMIT, sent together; a batch
-- takes the locks of all its change sets first, then calls it once per change set. See the
-- rustdoc of `store/postgres/commit.rs`.
--
-- The function is VOLATILE (the default), so each statement in it takes a fresh READ
-- COMMITTED snapshot: the checks, run once the key locks are held, see every commit of
-- those keys that ended while this one waited for them. `SET search_path FROM CURRENT`
-- binds its table and sequence names to this schema.

-- One change set, committed in the caller's transaction:
--
-- 1. the transaction-scoped advisory locks of its keys (`lock_*`), in one order (by lock
--    id, a hash of the schema's name `store`, the collection and the id): exclusive for a
--    key it writes, shared for one it only expects. A batch takes every change set's locks
--    first, in one statement, and passes none here;
-- 2. the gate (`gate_class`, the hash of `store`), exclusive when the change set has a
--    collection precondition (taking it again in one transaction costs nothing);
-- 3. the preconditions (`check_*`) checked and, only when they all hold, the writes and
--    events applied as the next commit. Nothing it checks can change before it writes: it
--    holds the locks of every key, and the gate exclusive for a collection precondition.
--
-- It answers the position of the first failing precondition, or the commit's revision; and
-- when one fails, the records the change set expected as they are now (`[collection, id,
-- value, revision]`, missing ones left out), so that the instance decides again on them
-- without reading them. When it commits and `notify_channel` is set, it also sends the
-- store's commit notification (`revision instance`), which then costs no transaction of its
-- own.
--
-- One plain statement per step, each skipped when it has nothing to do: PostgreSQL sets up
-- and runs these small cached plans for less than one statement that does every step. The
-- revision and the event ids come from sequences, taken only once the preconditions hold.
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
DECLARE
    failed bigint;
    taken bigint;
    changed text[] := touched;
BEGIN
    IF cardinality(lock_ids) > 0 THEN
        -- The subquery hands its lock ids over in order, and the aggregate takes them one
        -- row at a time, in that order.
        PERFORM count(CASE WHEN k.exclusive THEN pg_advisory_xact_lock(k.id)::text
                           ELSE pg_advisory_xact_lock_shared(k.id)::text END)
        FROM (
            SELECT hashtextextended(store || chr(31) || u.collection || chr(31) || u.id, 0)
                       AS id,
                   bool_or(u.exclusive) AS exclusive
            FROM unnest(lock_collections, lock_ids, lock_written)
                AS u(collection, id, exclusive)
            GROUP BY 1 ORDER BY 1
        ) AS k;
    END IF;
    IF exclusive_gate THEN
        PERFORM pg_advisory_xact_lock(gate_class, hashtext(store));
    ELSE
        PERFORM pg_advisory_xact_lock_shared(gate_class, hashtext(store));
    END IF;

    SELECT p.ord INTO failed
    FROM unnest(check_collections, check_ids, check_revisions)
        WITH ORDINALITY AS p(collection, id, expected, ord)
    WHERE CASE WHEN p.id IS NULL THEN
        coalesce((SELECT max(c.revision) FROM collection_changes c
                  WHERE c.collection = p.collection), 0) > p.expected
    ELSE
        coalesce((SELECT r.revision FROM records r
                  WHERE r.collection = p.collection AND r.id = p.id), 0) <> p.expected
    END
    ORDER BY p.ord LIMIT 1;
    IF failed IS NOT NULL THEN
        failing := failed;
        SELECT jsonb_agg(jsonb_build_array(r.collection, r.id, r.value, r.revision))
        INTO current
        FROM unnest(check_collections, check_ids) AS k(collection, id)
        JOIN records r ON r.collection = k.collection AND r.id = k.id;
        RETURN;
    END IF;

    taken := nextval('revisions');
    IF cardinality(put_ids) > 0 THEN
        INSERT INTO records AS r (collection, id, value, revision)
        SELECT w.collection, w.id, w.value, taken
        FROM unnest(put_collections, put_ids, put_values) AS w(collection, id, value)
        ON CONFLICT (collection, id)
        DO UPDATE SET value = excluded.value, revision = excluded.revision;
    END IF;
    IF cardinality(delete_ids) > 0 THEN
        -- Deleting a record that exists changes its collection too.
        WITH gone AS (
            DELETE FROM records r
            USING unnest(delete_collections, delete_ids) AS d(collection, id)
            WHERE r.collection = d.collection AND r.id = d.id
            RETURNING r.collection
        )
        SELECT changed || coalesce(array_agg(g.collection), '{}') INTO changed FROM gone g;
    END IF;
    IF cardinality(changed) > 0 THEN
        INSERT INTO collection_changes (collection, revision)
        SELECT DISTINCT t.collection, taken FROM unnest(changed) AS t(collection);
    END IF;
    IF cardinality(event_types) > 0 THEN
        -- Ids in the events' order: the sort runs before the ids are taken.
        INSERT INTO events (id, revision, type, created_by, created_at, project,
                            feature_name, environment, data, pre_data)
        SELECT nextval('event_ids'), taken, e.type, e.created_by, e.created_at, e.project,
               e.feature_name, e.environment, e.data, e.pre_data
        FROM unnest(event_types, event_created_by, event_created_at, event_projects,
                    event_features, event_environments, event_data, event_pre_data)
            WITH ORDINALITY AS e(type, created_by, created_at, project, feature_name,
                                 environment, data, pre_data, ord)
        ORDER BY e.ord;
    END IF;
    INSERT INTO commits (revision) VALUES (taken);
    revision := taken;
    IF notify_channel IS NOT NULL THEN
        PERFORM pg_notify(notify_channel, taken::text || ' ' || notify_instance);
    END IF;
END
$$;
