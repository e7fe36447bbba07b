-- faultline serve: full-text search over steps. The writer fills the
-- vector itself (see search.go), with the words SQLite's FTS5 index makes
-- of the same text (runs of letters and digits, case and accents ignored),
-- so that a search finds the same steps on both.
ALTER TABLE steps ADD COLUMN search TSVECTOR NOT NULL DEFAULT ''::tsvector;
CREATE INDEX steps_search ON steps USING GIN (search);

-- Keyset pagination: each sort order is an index ending in the id.
DROP INDEX traces_model;
CREATE INDEX traces_model ON traces(model, id);
CREATE INDEX traces_started ON traces(started, id);
CREATE INDEX traces_steps ON traces(step_count, id);
CREATE INDEX traces_system ON traces(system);
CREATE INDEX traces_scenario ON traces(scenario);
CREATE INDEX traces_format ON traces(format);
CREATE INDEX findings_source ON findings(source);
DROP INDEX findings_trace;
CREATE INDEX findings_trace ON findings(trace_id, source, mode, verdict);
