-- faultline serve: full-text search over steps, and the indexes its trace
-- list pages and filters by.

-- A stable number per trace. The search index needs integer row ids, and
-- traces' own rowid may change on VACUUM (it is not an INTEGER PRIMARY KEY).
CREATE TABLE trace_keys (
    key      INTEGER PRIMARY KEY,
    trace_id TEXT NOT NULL UNIQUE
);

-- Contentless: the text stays in steps alone, the index only says where a
-- word is. A step's row id is its trace's key << 24 | its index, so one
-- trace's steps are one range of row ids (steps from 2^24 on are not
-- indexed). contentless_delete lets a replaced trace's rows be removed.
CREATE VIRTUAL TABLE steps_fts USING fts5(
    text, args, tool,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Kept in sync by triggers, so that every writer (ingest, receive, a test's
-- generator) keeps the index without knowing of it. Steps are only ever
-- inserted and removed with their trace.
CREATE TRIGGER trace_keys_insert AFTER INSERT ON traces BEGIN
    INSERT INTO trace_keys (trace_id) VALUES (new.id);
END;
CREATE TRIGGER trace_keys_delete AFTER DELETE ON traces BEGIN
    DELETE FROM steps_fts WHERE rowid BETWEEN
        (SELECT key FROM trace_keys WHERE trace_id = old.id) << 24 AND
        ((SELECT key FROM trace_keys WHERE trace_id = old.id) << 24) | 16777215;
    DELETE FROM trace_keys WHERE trace_id = old.id;
END;
CREATE TRIGGER steps_fts_insert AFTER INSERT ON steps WHEN new.idx < 16777216 BEGIN
    INSERT INTO steps_fts (rowid, text, args, tool)
        SELECT (key << 24) | new.idx, new.text, new.args, new.tool FROM trace_keys WHERE trace_id = new.trace_id;
END;

-- The backfill of what was stored before.
INSERT INTO trace_keys (trace_id) SELECT id FROM traces ORDER BY rowid;
INSERT INTO steps_fts (rowid, text, args, tool)
    SELECT (k.key << 24) | s.idx, s.text, s.args, s.tool
    FROM steps s JOIN trace_keys k ON k.trace_id = s.trace_id
    WHERE s.idx < 16777216;

-- Keyset pagination: each sort order is an index ending in the id.
DROP INDEX traces_model;
CREATE INDEX traces_model ON traces(model, id);
CREATE INDEX traces_started ON traces(started, id);
CREATE INDEX traces_steps ON traces(step_count, id);
CREATE INDEX traces_system ON traces(system);
CREATE INDEX traces_scenario ON traces(scenario);
CREATE INDEX traces_format ON traces(format);
-- The list of annotation sources, read by skipping through this index.
CREATE INDEX findings_source ON findings(source);
-- A trace's findings of a source, as before, now also covering mode and
-- verdict, so that filtering traces by mode reads the index alone.
DROP INDEX findings_trace;
CREATE INDEX findings_trace ON findings(trace_id, source, mode, verdict);
