-- A summary of each trace's outcomes and findings, kept current on write,
-- for the readers that take the whole store at once (the cohort report, the
-- dashboard, agreement between sources): aggregating them as they are read
-- cost a subquery per trace and list (6 s of the server's time on 100,000
-- traces of 15 findings each) and JSON decoding in the client (4 s), where
-- reading a row of this table and its traces row, merged in id order, costs
-- the server a fraction of a second.
--
-- finding_list holds one entry per finding, in the order they were stored:
--   chr(30) json(source) verdict json(mode) [steps] chr(31)
-- where the verdict is + (present, followed by the steps as stored), -
-- (absent), ? (unsure) or any other verdict as a JSON string. outcome_list
-- holds one entry per outcome, in the order they were stored:
--   chr(30) json(source) json(metric) success json(detail) score
-- where success is t, f or n (none) and the score is PostgreSQL's shortest
-- exact text of the double, or empty when there is none. JSON quoting keeps
-- the separators out of the values (steps are a JSON array, which has no
-- control characters either).
--
-- A trace without findings or outcomes may have no row: readers join from
-- traces. No index covers the columns they read from traces, though an
-- index-only scan reads them faster where the rows are not stored in id
-- order: detected_with holds a detector set's description (500 bytes), and
-- a btree entry of more than 2.7 kB (a long model name) would refuse the
-- trace.
CREATE TABLE trace_summary (
    trace_id     TEXT COLLATE "C" PRIMARY KEY REFERENCES traces(id) ON DELETE CASCADE,
    outcome_list TEXT NOT NULL DEFAULT '',
    finding_list TEXT NOT NULL DEFAULT ''
);

-- Each list is written in one place, these functions, for the triggers and
-- the backfill alike. The score's text must not depend on the writer's
-- extra_float_digits: 1 is the shortest text that reads back exactly.
CREATE FUNCTION summary_findings(trace text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT COALESCE(string_agg(chr(30) || to_json(f.source)::text
        || CASE f.verdict WHEN 'present' THEN '+' || to_json(f.mode)::text || f.steps
            WHEN 'absent' THEN '-' || to_json(f.mode)::text
            WHEN 'unsure' THEN '?' || to_json(f.mode)::text
            ELSE to_json(f.verdict)::text || to_json(f.mode)::text END
        || chr(31), '' ORDER BY f.id), '')
    FROM findings f WHERE f.trace_id = $1
$$;

CREATE FUNCTION summary_outcomes(trace text) RETURNS text LANGUAGE sql STABLE SET extra_float_digits = 1 AS $$
    SELECT COALESCE(string_agg(chr(30) || to_json(o.source)::text || to_json(o.metric)::text
        || CASE WHEN o.success IS NULL THEN 'n' WHEN o.success THEN 't' ELSE 'f' END
        || to_json(o.detail)::text || COALESCE(o.score::text, ''), '' ORDER BY o.id), '')
    FROM outcomes o WHERE o.trace_id = $1
$$;

-- summary_refresh writes again the lists of the given traces, those still
-- stored. The rows are locked before the lists are read, each statement
-- seeing what was committed before it: two writers of one trace's findings
-- (two judges, say) take turns, and the second reads the first's findings,
-- where reading first and writing after would keep only its own.
CREATE FUNCTION summary_refresh(ids text[], findings boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    INSERT INTO trace_summary (trace_id) SELECT t.id FROM traces t WHERE t.id = ANY(ids) ORDER BY t.id ON CONFLICT DO NOTHING;
    PERFORM 1 FROM trace_summary s WHERE s.trace_id = ANY(ids) ORDER BY s.trace_id FOR UPDATE;
    IF findings THEN
        UPDATE trace_summary s SET finding_list = summary_findings(s.trace_id) WHERE s.trace_id = ANY(ids);
    ELSE
        UPDATE trace_summary s SET outcome_list = summary_outcomes(s.trace_id) WHERE s.trace_id = ANY(ids);
    END IF;
END
$$;

-- Once per statement, for the traces it touched: a trace's findings are
-- written a source at a time, in one statement.
CREATE FUNCTION summary_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM summary_refresh(ARRAY(SELECT DISTINCT trace_id FROM new_rows), TG_TABLE_NAME = 'findings');
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM summary_refresh(ARRAY(SELECT DISTINCT trace_id FROM old_rows), TG_TABLE_NAME = 'findings');
    ELSE
        PERFORM summary_refresh(ARRAY(SELECT trace_id FROM new_rows UNION SELECT trace_id FROM old_rows), TG_TABLE_NAME = 'findings');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER summary_findings_insert AFTER INSERT ON findings
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION summary_changed();
CREATE TRIGGER summary_findings_update AFTER UPDATE ON findings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION summary_changed();
CREATE TRIGGER summary_findings_delete AFTER DELETE ON findings
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION summary_changed();
CREATE TRIGGER summary_outcomes_insert AFTER INSERT ON outcomes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION summary_changed();
CREATE TRIGGER summary_outcomes_update AFTER UPDATE ON outcomes
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION summary_changed();
CREATE TRIGGER summary_outcomes_delete AFTER DELETE ON outcomes
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION summary_changed();

-- The backfill of what was stored before.
INSERT INTO trace_summary (trace_id, outcome_list, finding_list)
SELECT t.id, summary_outcomes(t.id), summary_findings(t.id) FROM traces t ORDER BY t.id;
