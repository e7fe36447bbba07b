-- PostgreSQL's trace_summary (its 0008): SQLite has kept one since its 0006.
SELECT 1;
