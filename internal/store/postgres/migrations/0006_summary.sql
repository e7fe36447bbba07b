-- SQLite keeps a summary row per trace for the readers of the whole store;
-- PostgreSQL aggregates a trace's outcomes and findings as it reads it (see
-- cohort.go), through the indexes above, and needs no copy.
SELECT 1;
