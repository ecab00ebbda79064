-- feedsync schema, version 1. Times are Unix seconds (REAL), published dates ISO 8601 UTC text.

-- A subscribed feed and everything a pull needs to continue where the last one stopped.
CREATE TABLE feed (
    id                 INTEGER PRIMARY KEY,
    url                TEXT NOT NULL UNIQUE
                       CHECK (url LIKE 'http://%' OR url LIKE 'https://%'),
    format             TEXT NOT NULL DEFAULT 'paged-json',
    added_at           REAL NOT NULL,
    -- Validators of the head page, for a conditional GET.
    etag               TEXT,
    last_modified      TEXT,
    -- What the server last reported, and the page size learned from it.
    remote_total       INTEGER CHECK (remote_total >= 0),
    per_page           INTEGER CHECK (per_page > 0),
    -- Backfill: the next older page to ask for, counted when the feed had backfill_total items.
    -- NULL before the first page was ever committed.
    backfill_page      INTEGER CHECK (backfill_page >= 1),
    backfill_total     INTEGER,
    backfill_done      INTEGER NOT NULL DEFAULT 0 CHECK (backfill_done IN (0, 1)),
    -- An interrupted head walk: new items above the old top were only partly fetched.
    gap_band           INTEGER,
    gap_page           INTEGER CHECK (gap_page >= 1),
    gap_total          INTEGER,
    -- The outcome of the last pull.
    last_pull_at       REAL,
    last_outcome       TEXT CHECK (last_outcome IN ('ok', 'transient', 'data', 'local')),
    last_error         TEXT,
    next_retry_at      REAL,
    CHECK ((gap_band IS NULL) = (gap_page IS NULL))
);

-- One picture per distinct URL, however many items use it: it is downloaded once.
CREATE TABLE picture (
    id                 INTEGER PRIMARY KEY,
    url                TEXT NOT NULL UNIQUE,
    status             TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'cached', 'failed')),
    -- The file's name inside the picture folder, made from id, never from the URL.
    file               TEXT,
    bytes              INTEGER CHECK (bytes >= 0),
    mime               TEXT,
    -- Failed downloads are not tried again before next_attempt_at.
    attempts           INTEGER NOT NULL DEFAULT 0,
    next_attempt_at    REAL,
    last_error         TEXT,
    updated_at         REAL,
    CHECK ((status = 'cached') = (file IS NOT NULL))
);

-- One news item. Order within a feed is (band, seq): bands below 0 hold items found at the head
-- (each head walk opens a new, lower band), band 0 holds the first pull and everything backfilled.
CREATE TABLE item (
    id                 INTEGER PRIMARY KEY,
    feed_id            INTEGER NOT NULL REFERENCES feed(id) ON DELETE CASCADE,
    key                TEXT NOT NULL CHECK (length(key) > 0),
    band               INTEGER NOT NULL,
    seq                INTEGER NOT NULL,
    title              TEXT NOT NULL,
    link               TEXT,
    pic_url            TEXT,
    picture_id         INTEGER REFERENCES picture(id),
    published          TEXT,
    summary            TEXT,
    stored_at          REAL NOT NULL,
    UNIQUE (feed_id, key),
    UNIQUE (feed_id, band, seq),
    CHECK ((pic_url IS NULL) = (picture_id IS NULL))
);
CREATE INDEX item_picture ON item (picture_id);

-- Where the reader is: the page `list` showed last, per feed URL or '*' for all feeds.
CREATE TABLE reading_position (
    scope              TEXT PRIMARY KEY,
    page               INTEGER NOT NULL CHECK (page >= 1),
    per_page           INTEGER NOT NULL CHECK (per_page BETWEEN 1 AND 500),
    updated_at         REAL NOT NULL
);

-- Settings remembered between runs, e.g. cache_size (bytes).
CREATE TABLE setting (
    name               TEXT PRIMARY KEY,
    value              TEXT NOT NULL
);
