-- feedsync schema, version 3: `list` finds a page without stepping over the rows above it.

-- How many items each band holds. A list position is found by adding band sizes (a few rows) and
-- then seeking (feed_id, band, seq) in item's unique index: no OFFSET scan, however deep the page.
CREATE TABLE band_size (
    feed_id            INTEGER NOT NULL REFERENCES feed(id) ON DELETE CASCADE,
    band               INTEGER NOT NULL,
    size               INTEGER NOT NULL CHECK (size >= 0),
    PRIMARY KEY (feed_id, band)
) WITHOUT ROWID;

-- Within a band, seq now runs 0, 1, 2 ... with no holes, so the n-th item of a band has seq n.
-- (Version 2 used up a number for every refreshed item.)
CREATE TEMP TABLE renumbered (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
INSERT INTO renumbered (id, seq)
    SELECT id, row_number() OVER (PARTITION BY feed_id, band ORDER BY seq) - 1 FROM item;
UPDATE item SET seq = -1 - seq;
UPDATE item SET seq = renumbered.seq FROM renumbered WHERE renumbered.id = item.id;
DROP TABLE renumbered;

INSERT INTO band_size (feed_id, band, size) SELECT feed_id, band, count(*) FROM item GROUP BY feed_id, band;
