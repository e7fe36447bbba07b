-- A new trace's summary row is written once, from the trace's own fields,
-- rather than inserted empty and then packed again through summary_repacked
-- (a join of the summary with traces, read back by id). At insert the row
-- holds no findings (0010's trigger started them from an empty row too) and
-- the outcomes already stored under the trace's id, if any, as before. On
-- traces of a small agent run's size (the receiver's, many small runs'),
-- that was a fifth of the time a trace's row took to write.
DROP TRIGGER summary_trace_insert;
CREATE TRIGGER summary_trace_insert AFTER INSERT ON traces BEGIN
    INSERT OR IGNORE INTO summary_detector_sets (detected_with) SELECT new.detected_with WHERE new.detected_with != '';
    INSERT OR REPLACE INTO trace_summary (trace_id, model, system, scenario, detected_with, outcome_list, packed)
    SELECT new.id, new.model, new.system, new.scenario, detected, outcomes,
        CAST(octet_length(new.id) || ',' || octet_length(new.model) || ',' || octet_length(new.system) || ','
            || octet_length(new.scenario) || ',' || octet_length(detected) || ',' || octet_length(outcomes) || ':'
            || new.id || new.model || new.system || new.scenario || detected || outcomes AS TEXT)
    FROM (SELECT
        ifnull((SELECT CAST(d.id AS TEXT) FROM summary_detector_sets d WHERE d.detected_with = new.detected_with), '') AS detected,
        (SELECT ifnull(group_concat(e.entry, '' ORDER BY e.id), '') FROM outcome_entries e WHERE e.trace_id = new.id) AS outcomes);
END;
