-- The event log is read a page at a time, newest first, filtered by type, project or
-- feature (GET /api/admin/events). Each filter walks its index backwards from the newest
-- match and stops at the page's end; the totals count through the same indexes.
CREATE INDEX events_type_id ON events (type, id);
CREATE INDEX events_project_id ON events (project, id);
CREATE INDEX events_feature_id ON events (feature_name, id);
