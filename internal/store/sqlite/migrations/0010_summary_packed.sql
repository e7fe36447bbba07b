-- Each summary row holds its columns packed into one text value, which the
-- whole-store readers read instead of seven columns: through the driver, a
-- row's columns one by one cost about twice a single value, and packing
-- them at read time (an expression per row) costs as much as the columns
-- saved.
--
-- packed is the byte length of each column but the last, comma-separated,
-- a colon, then the columns one after the other (trace_id, model, system,
-- scenario, detected_with, outcome_list and the finding list): lengths
-- rather than separators, because ids and model names are whatever the
-- traces said. The finding list, most of a row, is kept in packed alone,
-- last, so that a finding's entry is appended to packed as it was to the
-- list, and cut out of its end part; the other columns are kept apart too,
-- for the triggers to find where that part starts.
--
-- detected_with is, in the summary, the number of the detector set in
-- summary_detector_sets ('' for none): a set's name lists every detector
-- (over 500 bytes), and the summary is read whole.
--
-- The table is made again, and the triggers of 0006 that wrote it are made
-- again for it (those on traces, findings and outcomes that name it: the
-- legacy rename neither rewrites nor checks them).
PRAGMA legacy_alter_table = ON;

CREATE TABLE trace_summary_packed (
    trace_id      TEXT PRIMARY KEY,
    model         TEXT NOT NULL,
    system        TEXT NOT NULL,
    scenario      TEXT NOT NULL,
    detected_with TEXT NOT NULL,
    outcome_list  TEXT NOT NULL DEFAULT '',
    packed        TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE summary_detector_sets (
    id            INTEGER PRIMARY KEY,
    detected_with TEXT NOT NULL UNIQUE
);
INSERT INTO summary_detector_sets (detected_with)
SELECT DISTINCT detected_with FROM trace_summary WHERE detected_with != '' ORDER BY detected_with;

INSERT INTO trace_summary_packed (trace_id, model, system, scenario, detected_with, outcome_list, packed)
SELECT trace_id, model, system, scenario, detected_set, outcome_list,
    octet_length(trace_id) || ',' || octet_length(model) || ',' || octet_length(system) || ',' || octet_length(scenario) || ','
    || octet_length(detected_set) || ',' || octet_length(outcome_list) || ':'
    || trace_id || model || system || scenario || detected_set || outcome_list || finding_list
FROM (SELECT s.*, ifnull((SELECT CAST(d.id AS TEXT) FROM summary_detector_sets d WHERE d.detected_with = s.detected_with), '') AS detected_set
    FROM trace_summary s);

DROP TABLE trace_summary;
ALTER TABLE trace_summary_packed RENAME TO trace_summary;

PRAGMA legacy_alter_table = OFF;

-- A summary row's parts as they are to be: its trace's fields and outcome
-- list read again, and its finding list, the end of packed past the rest.
CREATE VIEW summary_parts AS
SELECT s.trace_id, t.model, t.system, t.scenario,
    ifnull((SELECT CAST(d.id AS TEXT) FROM summary_detector_sets d WHERE d.detected_with = t.detected_with), '') AS detected_with,
    (SELECT ifnull(group_concat(e.entry, '' ORDER BY e.id), '') FROM outcome_entries e WHERE e.trace_id = s.trace_id) AS outcome_list,
    -- (substr of an empty value, a row just made, is null)
    ifnull(substr(CAST(s.packed AS BLOB), instr(s.packed, ':') + 1 + octet_length(s.trace_id) + octet_length(s.model) + octet_length(s.system)
        + octet_length(s.scenario) + octet_length(s.detected_with) + octet_length(s.outcome_list)), '') AS findings
FROM trace_summary s JOIN traces t ON t.id = s.trace_id;

-- A summary row as it is to be, packed again.
CREATE VIEW summary_repacked AS
SELECT trace_id, model, system, scenario, detected_with, outcome_list,
    CAST(octet_length(trace_id) || ',' || octet_length(model) || ',' || octet_length(system) || ',' || octet_length(scenario) || ','
        || octet_length(detected_with) || ',' || octet_length(outcome_list) || ':'
        || trace_id || model || system || scenario || detected_with || outcome_list || findings AS TEXT) AS packed
FROM summary_parts;

-- A summary row with a finding's entry cut out of its finding list (the
-- first occurrence there, byte for byte), by finding.
CREATE VIEW summary_cut AS
SELECT id AS finding, trace_id,
    CASE WHEN at > 0 THEN CAST(substr(whole, 1, start + at - 2) || substr(whole, start + at - 1 + length(entry)) AS TEXT) ELSE packed END AS packed
FROM (SELECT id, trace_id, packed, whole, start, entry, instr(substr(whole, start), entry) AS at
    FROM (SELECT e.id, s.trace_id, s.packed, CAST(s.packed AS BLOB) AS whole, CAST(e.entry AS BLOB) AS entry,
        instr(s.packed, ':') + 1 + octet_length(s.trace_id) + octet_length(s.model) + octet_length(s.system)
            + octet_length(s.scenario) + octet_length(s.detected_with) + octet_length(s.outcome_list) AS start
        FROM finding_entries e JOIN trace_summary s ON s.trace_id = e.trace_id));

DROP TRIGGER summary_trace_insert;
DROP TRIGGER summary_trace_update;
DROP TRIGGER summary_finding_insert;
DROP TRIGGER summary_finding_delete;
DROP TRIGGER summary_finding_before_update;
DROP TRIGGER summary_finding_after_update;
DROP TRIGGER summary_outcome_insert;
DROP TRIGGER summary_outcome_update;
DROP TRIGGER summary_outcome_delete;

-- A trace's row starts with no outcomes and no findings.
CREATE TRIGGER summary_trace_insert AFTER INSERT ON traces BEGIN
    INSERT OR IGNORE INTO summary_detector_sets (detected_with) SELECT new.detected_with WHERE new.detected_with != '';
    INSERT OR REPLACE INTO trace_summary (trace_id, model, system, scenario, detected_with, packed)
        VALUES (new.id, '', '', '', '', '');
    UPDATE trace_summary SET (model, system, scenario, detected_with, outcome_list, packed) =
        (SELECT model, system, scenario, detected_with, outcome_list, packed FROM summary_repacked WHERE trace_id = new.id)
        WHERE trace_id = new.id;
END;
CREATE TRIGGER summary_trace_update AFTER UPDATE OF model, system, scenario, detected_with ON traces BEGIN
    INSERT OR IGNORE INTO summary_detector_sets (detected_with) SELECT new.detected_with WHERE new.detected_with != '';
    UPDATE trace_summary SET (model, system, scenario, detected_with, outcome_list, packed) =
        (SELECT model, system, scenario, detected_with, outcome_list, packed FROM summary_repacked WHERE trace_id = new.id)
        WHERE trace_id = new.id;
END;

-- A finding's entry is appended when it is stored and cut out of the
-- finding list (its first occurrence there, byte for byte) before it is
-- deleted; an update does both.
CREATE TRIGGER summary_finding_insert AFTER INSERT ON findings BEGIN
    INSERT OR IGNORE INTO summary_sources (source) VALUES (new.source);
    UPDATE trace_summary SET packed = packed || (SELECT entry FROM finding_entries WHERE id = new.id)
        WHERE trace_id = new.trace_id;
END;
CREATE TRIGGER summary_finding_delete BEFORE DELETE ON findings BEGIN
    UPDATE trace_summary SET packed = (SELECT packed FROM summary_cut WHERE finding = old.id)
        WHERE trace_id = old.trace_id;
END;
CREATE TRIGGER summary_finding_before_update BEFORE UPDATE ON findings BEGIN
    UPDATE trace_summary SET packed = (SELECT packed FROM summary_cut WHERE finding = old.id)
        WHERE trace_id = old.trace_id;
END;
CREATE TRIGGER summary_finding_after_update AFTER UPDATE ON findings BEGIN
    INSERT OR IGNORE INTO summary_sources (source) VALUES (new.source);
    UPDATE trace_summary SET packed = packed || (SELECT entry FROM finding_entries WHERE id = new.id)
        WHERE trace_id = new.trace_id;
END;

-- A trace has an outcome or two: its row is packed again whenever one
-- changes.
CREATE TRIGGER summary_outcome_insert AFTER INSERT ON outcomes BEGIN
    UPDATE trace_summary SET (outcome_list, packed) = (SELECT outcome_list, packed FROM summary_repacked WHERE trace_id = new.trace_id)
        WHERE trace_id = new.trace_id;
END;
CREATE TRIGGER summary_outcome_update AFTER UPDATE ON outcomes BEGIN
    UPDATE trace_summary SET (outcome_list, packed) = (SELECT r.outcome_list, r.packed FROM summary_repacked r WHERE r.trace_id = trace_summary.trace_id)
        WHERE trace_id IN (old.trace_id, new.trace_id);
END;
CREATE TRIGGER summary_outcome_delete AFTER DELETE ON outcomes BEGIN
    UPDATE trace_summary SET (outcome_list, packed) = (SELECT outcome_list, packed FROM summary_repacked WHERE trace_id = old.trace_id)
        WHERE trace_id = old.trace_id;
END;
