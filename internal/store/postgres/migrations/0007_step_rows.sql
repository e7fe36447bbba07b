-- SQLite moved its steps to a table keyed by row id (its 0007); here they
-- stay in steps, keyed by trace and index.
SELECT 1;
