-- SQLite's 0009 tunes when its FTS5 search index merges; PostgreSQL's GIN
-- index keeps its own pending list and needs nothing here.
SELECT 1;
