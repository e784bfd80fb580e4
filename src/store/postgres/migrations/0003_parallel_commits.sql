-- Migration 3: commits no longer take turns on one row. Runs with search_path set to the
-- store's schema.
--
-- Until now every commit locked `store_meta` until COMMIT, which ordered all commits of all
-- instances behind one another's WAL flush, and updated one `collections` row per collection
-- it wrote, on which writers of one collection took turns. Now a commit locks only the keys
-- it reads and writes (advisory locks), and takes its revision and event ids from sequences;
-- the store's revision and each collection's are the highest recorded in two append-only
-- tables. See the rustdoc of `store/postgres/batch.rs` for why views stay consistent.

CREATE SEQUENCE revisions AS bigint;
CREATE SEQUENCE event_ids AS bigint;
SELECT setval('revisions', revision) FROM store_meta WHERE revision > 0;
SELECT setval('event_ids', last_event_id) FROM store_meta WHERE last_event_id > 0;

-- One row per commit: the store's revision is the highest one here.
CREATE TABLE commits (
    revision bigint PRIMARY KEY
);
INSERT INTO commits (revision) SELECT revision FROM store_meta WHERE revision > 0;

-- One row per commit and collection it wrote to (or deleted an existing record from): a
-- collection's revision is its highest one here, found by walking the key backwards.
CREATE TABLE collection_changes (
    collection text NOT NULL,
    revision bigint NOT NULL,
    PRIMARY KEY (collection, revision)
);
INSERT INTO collection_changes (collection, revision) SELECT collection, revision FROM collections;

-- An instance of an earlier version still running on this schema would go on ordering its
-- commits by `store_meta` while this one does not: without the table its commits fail
-- instead of going wrong quietly.
DROP TABLE collections;
DROP TABLE store_meta;
