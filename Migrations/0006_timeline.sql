-- feedsync schema, version 6: all feeds as one timeline, and full-text search.

-- Where an item sits in the all-feeds timeline, newest first (Unix seconds): its published time,
-- never later than when it was stored, so a date in the future does not pin an item to the top; an
-- undated item takes the time of the item above it in its feed (its feed's order), else the time it
-- was stored. Set when the item is first stored and kept, so a refreshed date does not move an item
-- the reader has already passed. Ties are broken by the feed's order: (timeline DESC, feed_id, band, seq).
ALTER TABLE item ADD COLUMN timeline INTEGER NOT NULL DEFAULT 0;
UPDATE item SET timeline = CAST(min(coalesce(unixepoch(published), stored_at), stored_at) AS INTEGER);
CREATE INDEX item_timeline ON item (timeline DESC, feed_id, band, seq);

-- Runs of items that are next to each other in the timeline: one time, one feed and band, seqs
-- first_seq, first_seq + 1, ... first_seq + size - 1. In the timeline the runs follow each other as a
-- feed's bands do in its list, so a page is found by adding sizes, then read by seeking seqs. Items
-- are only ever deleted with their feed, and their timeline never changes, so a run only grows.
CREATE TABLE timeline_run (
    timeline           INTEGER NOT NULL,
    feed_id            INTEGER NOT NULL REFERENCES feed(id) ON DELETE CASCADE,
    band               INTEGER NOT NULL,
    first_seq          INTEGER NOT NULL CHECK (first_seq >= 0),
    size               INTEGER NOT NULL CHECK (size > 0),
    PRIMARY KEY (timeline DESC, feed_id, band, first_seq)
) WITHOUT ROWID;
CREATE INDEX timeline_run_feed ON timeline_run (feed_id);

-- How many items the timeline holds per 2^16 seconds (about 18 hours): adding these finds the
-- stretch a deep page starts in without stepping over every run above it. Kept by the triggers below.
CREATE TABLE timeline_bucket (
    bucket             INTEGER PRIMARY KEY,
    size               INTEGER NOT NULL CHECK (size >= 0)
);

CREATE TRIGGER timeline_run_inserted AFTER INSERT ON timeline_run BEGIN
    INSERT INTO timeline_bucket (bucket, size) VALUES (new.timeline >> 16, new.size)
        ON CONFLICT (bucket) DO UPDATE SET size = size + excluded.size;
END;
CREATE TRIGGER timeline_run_grown AFTER UPDATE OF size ON timeline_run BEGIN
    UPDATE timeline_bucket SET size = size + new.size - old.size WHERE bucket = new.timeline >> 16;
END;
CREATE TRIGGER timeline_run_deleted AFTER DELETE ON timeline_run BEGIN
    UPDATE timeline_bucket SET size = size - old.size WHERE bucket = old.timeline >> 16;
END;

-- The runs of the items already stored: consecutive seqs of one time in one band (seq less the
-- item's rank among its band's items of that time is the same along a run).
INSERT INTO timeline_run (timeline, feed_id, band, first_seq, size)
    SELECT timeline, feed_id, band, min(seq), count(*) FROM (
        SELECT timeline, feed_id, band, seq,
            seq - row_number() OVER (PARTITION BY feed_id, band, timeline ORDER BY seq) AS island
        FROM item
    ) GROUP BY timeline, feed_id, band, island;

-- Full-text search over each item's title and text (its content as plain text, else its summary).
-- Written when an item is stored, with the characters of scripts written without spaces (Chinese,
-- Japanese) spaced out, so each is a word and a phrase of them finds any run of characters. Filled
-- for the items already stored by the migration's Swift step (Store.swift).
CREATE VIRTUAL TABLE item_search USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2', columnsize = 0);
CREATE TRIGGER item_deleted_search AFTER DELETE ON item BEGIN
    DELETE FROM item_search WHERE rowid = old.id;
END;
