-- feedsync schema, version 12: a cached picture's file is checked against its record when read.

-- XXH3's 64-bit hash of the file's bytes (as SQLite's signed integer), written with its byte
-- count when the picture is recorded. Pictures no file system flush made durable are trusted only
-- while their file has that size and hash: a file a crash cut short, or one changed behind
-- feedsync's back, is dropped when read and fetched again. Pictures cached before this version
-- have none; `gc` fills it in for each whose file still has its recorded size.
ALTER TABLE picture ADD COLUMN hash INTEGER;
