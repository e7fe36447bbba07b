-- FTS5 merges the search index's segments once four of one size exist (its
-- default). Every batch of traces the writer commits adds a segment, so
-- an ingest of many small traces rewrote the index again and again: on
-- 5,000 small runs, merging was a sixth of the store's time. Merging at
-- sixteen (FTS5's most) made the store's writes about a tenth faster and
-- the index a little smaller, for a search that reads a few more segments
-- (about 1 ms more for five searches over 5,000 runs).
INSERT INTO steps_fts (steps_fts, rank) VALUES ('automerge', 16);
