-- The LLM judge (faultline judge).

-- Accepted answers by the hash of the request that asked for them (model,
-- parameters, messages), so a re-run makes no call. Not tied to a trace:
-- identical prompts share an answer.
CREATE TABLE judge_cache (
    key           TEXT PRIMARY KEY,
    model         TEXT NOT NULL,
    content       TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL
);

-- One record per judged trace and judge source (judge:<model>): whether the
-- judgement succeeded, and what it took. Its findings are in findings.
CREATE TABLE judge_runs (
    trace_id       TEXT COLLATE "C" NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
    source         TEXT COLLATE "C" NOT NULL,
    prompt_version TEXT NOT NULL,
    status         TEXT NOT NULL,
    error          TEXT NOT NULL DEFAULT '',
    windows        INTEGER NOT NULL DEFAULT 0,
    samples        INTEGER NOT NULL DEFAULT 1,
    agreement      TEXT NOT NULL DEFAULT '{}', -- mode → share of samples with the majority
    summary        TEXT NOT NULL DEFAULT '',
    task_success   TEXT NOT NULL DEFAULT '',
    calls          INTEGER NOT NULL DEFAULT 0,
    input_tokens   INTEGER NOT NULL DEFAULT 0,
    output_tokens  INTEGER NOT NULL DEFAULT 0,
    cost           DOUBLE PRECISION,           -- dollars; NULL when the model has no price
    judged_at      TEXT NOT NULL,
    PRIMARY KEY (trace_id, source)
);
