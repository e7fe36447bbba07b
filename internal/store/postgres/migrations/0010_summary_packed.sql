-- SQLite's 0010 packs each summary row into one value for its driver's
-- sake; PostgreSQL reads its summary's columns as they are.
SELECT 1;
