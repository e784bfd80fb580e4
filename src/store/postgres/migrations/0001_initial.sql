-- Migration 1: the tables of a PostgresStore. Runs with search_path set to the store's schema.

-- Every record of every collection. `id` sorts in byte order (COLLATE "C") so that listings
-- come out in the same order as in every other store, and prefix ranges use the primary key.
CREATE TABLE records (
    collection text NOT NULL,
    id text COLLATE "C" NOT NULL,
    value jsonb NOT NULL,
    revision bigint NOT NULL,
    PRIMARY KEY (collection, id)
);

-- The revision of the last commit that wrote or deleted something in a collection, for
-- collection preconditions. A collection nothing was written to has no row (revision 0).
CREATE TABLE collections (
    collection text PRIMARY KEY,
    revision bigint NOT NULL
);

-- The audit log. Ids are handed out under the store_meta lock, so they have no gaps.
CREATE TABLE events (
    id bigint PRIMARY KEY,
    revision bigint NOT NULL,
    type text NOT NULL,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL,
    project text,
    feature_name text,
    environment text,
    data jsonb,
    pre_data jsonb
);

-- One row: the store's revision and last event id. Every commit locks it first, which
-- serialises commits and keeps revisions and event ids gap-free and in commit order.
CREATE TABLE store_meta (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    revision bigint NOT NULL,
    last_event_id bigint NOT NULL
);

INSERT INTO store_meta (singleton, revision, last_event_id) VALUES (true, 0, 0);
