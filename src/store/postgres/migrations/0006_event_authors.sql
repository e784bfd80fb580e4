-- Migration 6: events record who made them by user id (Unleash's `createdByUserId`: the
-- user a key acts as, -42 for a key that acts as no user, -1337 for the service itself)
-- and the tags they carry (Unleash's `tags`: a deleted feature's tags). Runs with
-- search_path set to the store's schema.
--
-- Both columns are nullable: events written before this migration (and by instances of the
-- earlier version still running on this schema during an upgrade, whose function of
-- migration 5 stays, unchanged) have neither. The function below is migration 5's with the
-- two arrays added at the end of its parameters.

ALTER TABLE events ADD COLUMN created_by_user_id bigint, ADD COLUMN tags jsonb;

CREATE FUNCTION commit_change_set(
    store text, gate_class integer, exclusive_gate boolean,
    lock_keys bigint[], lock_exclusive boolean[],
    check_collections text[], check_ids text[], check_revisions bigint[],
    put_collections text[], put_ids text[], put_values jsonb[],
    delete_collections text[], delete_ids text[], touched text[],
    event_types text[], event_created_by text[], event_created_at timestamptz[],
    event_projects text[], event_features text[], event_environments text[],
    event_data jsonb[], event_pre_data jsonb[], notify_channel text, notify_instance text,
    event_created_by_user_id bigint[], event_tags jsonb[],
    OUT failing bigint, OUT revision bigint, OUT current jsonb)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    failed bigint;
    taken bigint;
    changed text[] := touched;
BEGIN
    -- One simple expression per lock, evaluated without the executor, in the order given.
    FOR n IN 1 .. coalesce(cardinality(lock_keys), 0) LOOP
        IF lock_exclusive[n] THEN
            PERFORM pg_advisory_xact_lock(lock_keys[n]);
        ELSE
            PERFORM pg_advisory_xact_lock_shared(lock_keys[n]);
        END IF;
    END LOOP;
    IF exclusive_gate THEN
        PERFORM pg_advisory_xact_lock(gate_class, hashtext(store));
    ELSE
        PERFORM pg_advisory_xact_lock_shared(gate_class, hashtext(store));
    END IF;

    IF array_position(check_ids, NULL) IS NULL THEN
        -- Record preconditions only (a missing record is at revision 0).
        SELECT p.ord INTO failed
        FROM unnest(check_collections, check_ids, check_revisions)
            WITH ORDINALITY AS p(collection, id, expected, ord)
        LEFT JOIN records r ON r.collection = p.collection AND r.id = p.id
        WHERE coalesce(r.revision, 0) <> p.expected
        ORDER BY p.ord LIMIT 1;
    ELSE
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
    END IF;
    IF failed IS NOT NULL THEN
        failing := failed;
        SELECT jsonb_agg(jsonb_build_array(r.collection, r.id, r.value, r.revision))
        INTO current
        FROM unnest(check_collections, check_ids) AS k(collection, id)
        JOIN records r ON r.collection = k.collection AND r.id = k.id;
        RETURN;
    END IF;

    taken := nextval('revisions');
    IF cardinality(put_ids) = 1 THEN
        INSERT INTO records AS r (collection, id, value, revision)
        VALUES (put_collections[1], put_ids[1], put_values[1], taken)
        ON CONFLICT (collection, id)
        DO UPDATE SET value = excluded.value, revision = excluded.revision;
    ELSIF cardinality(put_ids) > 1 THEN
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
    IF cardinality(changed) = 1 THEN
        INSERT INTO collection_changes (collection, revision) VALUES (changed[1], taken);
    ELSIF cardinality(changed) > 1 THEN
        INSERT INTO collection_changes (collection, revision)
        SELECT DISTINCT t.collection, taken FROM unnest(changed) AS t(collection);
    END IF;
    IF cardinality(event_types) = 1 THEN
        INSERT INTO events (id, revision, type, created_by, created_at, project,
                            feature_name, environment, data, pre_data,
                            created_by_user_id, tags)
        VALUES (nextval('event_ids'), taken, event_types[1], event_created_by[1],
                event_created_at[1], event_projects[1], event_features[1],
                event_environments[1], event_data[1], event_pre_data[1],
                event_created_by_user_id[1], event_tags[1]);
    ELSIF cardinality(event_types) > 1 THEN
        -- Ids in the events' order: the sort runs before the ids are taken.
        INSERT INTO events (id, revision, type, created_by, created_at, project,
                            feature_name, environment, data, pre_data,
                            created_by_user_id, tags)
        SELECT nextval('event_ids'), taken, e.type, e.created_by, e.created_at, e.project,
               e.feature_name, e.environment, e.data, e.pre_data, e.created_by_user_id,
               e.tags
        FROM unnest(event_types, event_created_by, event_created_at, event_projects,
                    event_features, event_environments, event_data, event_pre_data,
                    event_created_by_user_id, event_tags)
            WITH ORDINALITY AS e(type, created_by, created_at, project, feature_name,
                                 environment, data, pre_data, created_by_user_id, tags,
                                 ord)
        ORDER BY e.ord;
    END IF;
    INSERT INTO commits (revision) VALUES (taken);
    revision := taken;
    IF notify_channel IS NOT NULL THEN
        PERFORM pg_notify(notify_channel, taken::text || ' ' || notify_instance);
    END IF;
END
$$;
