-- A summary of each trace, kept current on write, for the readers that take
-- the whole store at once (the cohort report, the dashboard, agreement
-- between sources): one row per trace, read in one pass in id order,
-- instead of the traces, their outcomes and every finding through four
-- queries. Reading a row costs the driver about as much as reading a
-- finding, so a trace's findings are folded into its row rather than kept
-- as one row per trace and source, which would read two or three rows a
-- trace.
--
-- finding_list holds one entry per finding, in the order they were stored:
--   char(30) source-number verdict json_quote(mode) [steps] char(31)
-- where the verdict is + (present, followed by the steps as stored), -
-- (absent), ? (unsure) or any other verdict as a JSON string, and the source
-- is numbered in summary_sources. outcome_list holds one entry per outcome,
-- in the order they were stored:
--   char(30) json_quote(source) json_quote(metric) success [detail] score
-- where success is t, f or n (undecided, followed by the detail as a JSON
-- string) and the score is written with 17 significant digits (exact for a
-- double), or empty when there is none. JSON quoting keeps the separators
-- out of the values, so an entry is found again, and removed, by its text.

CREATE TABLE summary_sources (
    id     INTEGER PRIMARY KEY,
    source TEXT NOT NULL UNIQUE
);

CREATE TABLE trace_summary (
    trace_id      TEXT PRIMARY KEY,
    model         TEXT NOT NULL,
    system        TEXT NOT NULL,
    scenario      TEXT NOT NULL,
    detected_with TEXT NOT NULL,
    outcome_list  TEXT NOT NULL DEFAULT '',
    finding_list  TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;

-- Each entry is written in one place, these views, for the triggers and the
-- backfill alike.
CREATE VIEW finding_entries AS
SELECT f.id, f.trace_id, char(30) || s.id
    || CASE f.verdict WHEN 'present' THEN '+' || json_quote(f.mode) || f.steps
        WHEN 'absent' THEN '-' || json_quote(f.mode)
        WHEN 'unsure' THEN '?' || json_quote(f.mode)
        ELSE json_quote(f.verdict) || json_quote(f.mode) END
    || char(31) AS entry
FROM findings f JOIN summary_sources s ON s.source = f.source;

CREATE VIEW outcome_entries AS
SELECT rowid AS id, trace_id, char(30) || json_quote(source) || json_quote(metric)
    || CASE WHEN success IS NULL THEN 'n' || json_quote(detail) WHEN success THEN 't' ELSE 'f' END
    || iif(score IS NULL, '', printf('%!.17g', score)) AS entry
FROM outcomes;

CREATE TRIGGER summary_trace_insert AFTER INSERT ON traces BEGIN
    INSERT OR REPLACE INTO trace_summary (trace_id, model, system, scenario, detected_with)
        VALUES (new.id, new.model, new.system, new.scenario, new.detected_with);
END;
CREATE TRIGGER summary_trace_update AFTER UPDATE OF model, system, scenario, detected_with ON traces BEGIN
    UPDATE trace_summary SET model = new.model, system = new.system, scenario = new.scenario, detected_with = new.detected_with
        WHERE trace_id = new.id;
END;
-- Before the trace goes, so that its findings and outcomes, deleted with
-- it, find no row to update.
CREATE TRIGGER summary_trace_delete BEFORE DELETE ON traces BEGIN
    DELETE FROM trace_summary WHERE trace_id = old.id;
END;

-- A finding's entry is appended when it is stored and cut out (its first
-- occurrence, byte for byte) before it is deleted; an update does both.
CREATE TRIGGER summary_finding_insert AFTER INSERT ON findings BEGIN
    INSERT OR IGNORE INTO summary_sources (source) VALUES (new.source);
    UPDATE trace_summary SET finding_list = finding_list || (SELECT entry FROM finding_entries WHERE id = new.id)
        WHERE trace_id = new.trace_id;
END;
CREATE TRIGGER summary_finding_delete BEFORE DELETE ON findings BEGIN
    UPDATE trace_summary SET finding_list = (
        SELECT CASE WHEN at > 0 THEN substr(list, 1, at - 1) || substr(list, at + length(entry)) ELSE list END
        FROM (SELECT list, entry, instr(list, entry) AS at
            FROM (SELECT CAST(finding_list AS BLOB) AS list, CAST(entry AS BLOB) AS entry FROM finding_entries WHERE id = old.id)))
        WHERE trace_id = old.trace_id;
END;
CREATE TRIGGER summary_finding_before_update BEFORE UPDATE ON findings BEGIN
    UPDATE trace_summary SET finding_list = (
        SELECT CASE WHEN at > 0 THEN substr(list, 1, at - 1) || substr(list, at + length(entry)) ELSE list END
        FROM (SELECT list, entry, instr(list, entry) AS at
            FROM (SELECT CAST(finding_list AS BLOB) AS list, CAST(entry AS BLOB) AS entry FROM finding_entries WHERE id = old.id)))
        WHERE trace_id = old.trace_id;
END;
CREATE TRIGGER summary_finding_after_update AFTER UPDATE ON findings BEGIN
    INSERT OR IGNORE INTO summary_sources (source) VALUES (new.source);
    UPDATE trace_summary SET finding_list = finding_list || (SELECT entry FROM finding_entries WHERE id = new.id)
        WHERE trace_id = new.trace_id;
END;

-- A trace has an outcome or two: its list is written again whenever one
-- changes.
CREATE TRIGGER summary_outcome_insert AFTER INSERT ON outcomes BEGIN
    UPDATE trace_summary SET outcome_list = (SELECT ifnull(group_concat(entry, '' ORDER BY id), '') FROM outcome_entries WHERE trace_id = new.trace_id)
        WHERE trace_id = new.trace_id;
END;
CREATE TRIGGER summary_outcome_update AFTER UPDATE ON outcomes BEGIN
    UPDATE trace_summary SET outcome_list = (SELECT ifnull(group_concat(entry, '' ORDER BY id), '') FROM outcome_entries WHERE trace_id = old.trace_id)
        WHERE trace_id IN (old.trace_id, new.trace_id);
END;
CREATE TRIGGER summary_outcome_delete AFTER DELETE ON outcomes BEGIN
    UPDATE trace_summary SET outcome_list = (SELECT ifnull(group_concat(entry, '' ORDER BY id), '') FROM outcome_entries WHERE trace_id = old.trace_id)
        WHERE trace_id = old.trace_id;
END;

-- The backfill of what was stored before.
INSERT INTO summary_sources (source) SELECT DISTINCT source FROM findings ORDER BY source;
INSERT INTO trace_summary (trace_id, model, system, scenario, detected_with, outcome_list, finding_list)
SELECT t.id, t.model, t.system, t.scenario, t.detected_with,
    (SELECT ifnull(group_concat(entry, '' ORDER BY id), '') FROM outcome_entries o WHERE o.trace_id = t.id),
    (SELECT ifnull(group_concat(entry, '' ORDER BY id), '') FROM finding_entries f WHERE f.trace_id = t.id)
FROM traces t;
