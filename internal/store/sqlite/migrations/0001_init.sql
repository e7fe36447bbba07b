-- Files ingested, by path; the content hash makes re-ingest idempotent.
CREATE TABLE files (
    path        TEXT PRIMARY KEY,
    hash        TEXT NOT NULL,
    format      TEXT NOT NULL,
    size        INTEGER NOT NULL,
    traces      INTEGER NOT NULL DEFAULT 0,
    ingested_at TEXT NOT NULL
);

CREATE TABLE traces (
    id          TEXT PRIMARY KEY,
    file        TEXT NOT NULL,
    format      TEXT NOT NULL,
    source      TEXT NOT NULL,
    system      TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL DEFAULT '',
    task        TEXT NOT NULL DEFAULT '',
    scenario    TEXT NOT NULL DEFAULT '',
    trial       TEXT NOT NULL DEFAULT '',
    started     TEXT NOT NULL DEFAULT '',
    ended       TEXT NOT NULL DEFAULT '',
    step_count  INTEGER NOT NULL,
    usage       TEXT NOT NULL DEFAULT '{}',
    meta        TEXT NOT NULL DEFAULT '{}',
    diagnosis_source TEXT NOT NULL DEFAULT '',
    diagnosis   TEXT,
    -- The detector set that produced this trace's detector findings.
    detected_with TEXT NOT NULL DEFAULT ''
);
CREATE INDEX traces_file ON traces(file);
CREATE INDEX traces_model ON traces(model);

CREATE TABLE steps (
    trace_id  TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,
    kind      TEXT NOT NULL,
    role      TEXT NOT NULL DEFAULT '',
    agent     TEXT NOT NULL DEFAULT '',
    text      TEXT NOT NULL DEFAULT '',
    tool      TEXT NOT NULL DEFAULT '',
    args      TEXT NOT NULL DEFAULT '',
    call_id   TEXT NOT NULL DEFAULT '',
    pair      INTEGER,
    exit_code INTEGER,
    is_error  INTEGER NOT NULL DEFAULT 0,
    time      TEXT NOT NULL DEFAULT '',
    tokens    INTEGER NOT NULL DEFAULT 0,
    type      TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (trace_id, idx)
) WITHOUT ROWID;

CREATE TABLE findings (
    id          INTEGER PRIMARY KEY,
    trace_id    TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
    source      TEXT NOT NULL,
    mode        TEXT NOT NULL,
    verdict     TEXT NOT NULL,
    detector    TEXT NOT NULL DEFAULT '',
    steps       TEXT NOT NULL DEFAULT '[]',
    quote       TEXT NOT NULL DEFAULT '',
    confidence  REAL NOT NULL DEFAULT 0,
    explanation TEXT NOT NULL DEFAULT '',
    taxonomy    TEXT NOT NULL DEFAULT '',
    raw_label   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX findings_trace ON findings(trace_id, source);
CREATE INDEX findings_mode ON findings(mode, verdict);

CREATE TABLE outcomes (
    trace_id TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
    source   TEXT NOT NULL,
    metric   TEXT NOT NULL DEFAULT '',
    score    REAL,
    success  INTEGER,
    detail   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (trace_id, source)
);
