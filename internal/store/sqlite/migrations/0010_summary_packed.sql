-- Each summary row also holds its columns packed into one text value,
-- kept by SQLite as the row is written: the whole-store readers read that
-- one value instead of seven columns. Through the driver, a row's columns
-- one by one cost about twice a single value, and packing them at read
-- time (an expression per row) costs as much as the columns saved.
--
-- packed is the byte length of each column but the last, comma-separated,
-- a colon, then the columns one after the other: lengths rather than
-- separators, because ids and model names are whatever the traces said.
--
-- A stored generated column cannot be added to a table, so the table is
-- made again. The triggers of 0006 name trace_summary: with the legacy
-- rename, SQLite neither rewrites nor checks them, and they find the new
-- table under the old name.
PRAGMA legacy_alter_table = ON;

CREATE TABLE trace_summary_packed (
    trace_id      TEXT PRIMARY KEY,
    model         TEXT NOT NULL,
    system        TEXT NOT NULL,
    scenario      TEXT NOT NULL,
    detected_with TEXT NOT NULL,
    outcome_list  TEXT NOT NULL DEFAULT '',
    finding_list  TEXT NOT NULL DEFAULT '',
    packed        TEXT GENERATED ALWAYS AS (
        octet_length(trace_id) || ',' || octet_length(model) || ',' || octet_length(system) || ','
        || octet_length(scenario) || ',' || octet_length(detected_with) || ',' || octet_length(outcome_list) || ':'
        || trace_id || model || system || scenario || detected_with || outcome_list || finding_list
    ) STORED
) WITHOUT ROWID;

INSERT INTO trace_summary_packed (trace_id, model, system, scenario, detected_with, outcome_list, finding_list)
SELECT trace_id, model, system, scenario, detected_with, outcome_list, finding_list FROM trace_summary;

DROP TABLE trace_summary;
ALTER TABLE trace_summary_packed RENAME TO trace_summary;

PRAGMA legacy_alter_table = OFF;
