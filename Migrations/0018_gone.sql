-- feedsync schema, version 18: items removed for their age (`gc --older-than`) stay removed.

-- The key of each item `gc --older-than` removed, and the band it was in: a later pull that meets
-- it again in its feed knows it, for the paging's sake, and does not store it again. Gone with the feed.
CREATE TABLE item_gone (
    feed_id            INTEGER NOT NULL REFERENCES feed(id) ON DELETE CASCADE,
    key                TEXT NOT NULL,
    band               INTEGER NOT NULL,
    PRIMARY KEY (feed_id, key)
) WITHOUT ROWID;
