-- Steps move to step_rows, whose row id is the step's row id in the search
-- index: its trace's key << 24 | its index (see 0004). One trace's steps are
-- then one range of row ids, stored in order and read by range, as the
-- index's are, with neither the trace id repeated on every step nor an index
-- over (trace_id, idx): steps was a table WITHOUT ROWID, whose rows of more
-- than about a kilobyte spilled onto overflow pages of their own, most of
-- each left empty (a third of the table on Codex rollouts). A trace has at
-- most 2^24 steps (the writer refuses more).
CREATE TABLE step_rows (
    kind      TEXT NOT NULL,
    role      TEXT NOT NULL DEFAULT '',
    agent     TEXT NOT NULL DEFAULT '',
    tool      TEXT NOT NULL DEFAULT '',
    call_id   TEXT NOT NULL DEFAULT '',
    pair      INTEGER,
    exit_code INTEGER,
    is_error  INTEGER NOT NULL DEFAULT 0,
    time      TEXT NOT NULL DEFAULT '',
    tokens    INTEGER NOT NULL DEFAULT 0,
    type      TEXT NOT NULL DEFAULT '',
    span_id   TEXT NOT NULL DEFAULT '',
    text      TEXT NOT NULL DEFAULT '',
    args      TEXT NOT NULL DEFAULT ''
);

-- A trace with a step beyond 2^24 (none can be read in practice: it would
-- take gigabytes) cannot be kept whole: it goes, and its file is read, and
-- refused, again.
UPDATE files SET hash = '' WHERE path IN
    (SELECT t.file FROM traces t WHERE t.id IN (SELECT trace_id FROM steps WHERE idx >= 16777216 OR idx < 0));
DELETE FROM traces WHERE id IN (SELECT trace_id FROM steps WHERE idx >= 16777216 OR idx < 0);

INSERT INTO step_rows (rowid, kind, role, agent, tool, call_id, pair, exit_code, is_error, time, tokens, type, span_id, text, args)
    SELECT (k.key << 24) | s.idx, s.kind, s.role, s.agent, s.tool, s.call_id, s.pair, s.exit_code, s.is_error, s.time, s.tokens, s.type, s.span_id, s.text, s.args
    FROM steps s JOIN trace_keys k ON k.trace_id = s.trace_id
    ORDER BY 1;
DROP TRIGGER steps_fts_insert;
DROP TABLE steps;

-- The writer indexes the steps itself, a batch of traces at a time: a
-- trigger made each step's insert a statement writing to the index, and
-- FTS5 writes out what it holds at the start of every such statement, one
-- small segment per step, merged again and again (a fifth of an ingest's
-- time). A trace's steps and its entries in the index go with it.
DROP TRIGGER trace_keys_delete;
CREATE TRIGGER trace_keys_delete AFTER DELETE ON traces BEGIN
    DELETE FROM steps_fts WHERE rowid BETWEEN
        (SELECT key FROM trace_keys WHERE trace_id = old.id) << 24 AND
        ((SELECT key FROM trace_keys WHERE trace_id = old.id) << 24) | 16777215;
    DELETE FROM step_rows WHERE rowid BETWEEN
        (SELECT key FROM trace_keys WHERE trace_id = old.id) << 24 AND
        ((SELECT key FROM trace_keys WHERE trace_id = old.id) << 24) | 16777215;
    DELETE FROM trace_keys WHERE trace_id = old.id;
END;

-- The steps as they were, for SQL written against them: a trace's steps
-- are found through its key, by range.
CREATE VIEW steps AS
    SELECT k.trace_id, s.rowid & 16777215 AS idx, s.kind, s.role, s.agent, s.text, s.tool, s.args, s.call_id,
        s.pair, s.exit_code, s.is_error, s.time, s.tokens, s.type, s.span_id
    FROM trace_keys k JOIN step_rows s ON s.rowid BETWEEN k.key << 24 AND (k.key << 24) | 16777215;
