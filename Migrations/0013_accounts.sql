-- feedsync schema, version 13: accounts on an aggregator (Tiny Tiny RSS), their feeds and items
-- beside the local ones, stars, and the marks made offline waiting to be handed back.

-- An account. Its password and session are not here but in the data home's accounts/ folder
-- (mode 0600), so a copy of the database carries no secret.
CREATE TABLE account (
    id                 INTEGER PRIMARY KEY,
    name               TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    kind               TEXT NOT NULL CHECK (kind IN ('ttrss')),
    -- The API's URL (Tiny Tiny RSS: .../api/).
    url                TEXT NOT NULL CHECK (url LIKE 'http://%' OR url LIKE 'https://%'),
    user_name          TEXT NOT NULL,
    added_at           REAL NOT NULL,
    -- The first sync's walk through every article, newest first: how many are behind it (the
    -- next page's skip), and whether it is over.
    backfill_skip      INTEGER NOT NULL DEFAULT 0 CHECK (backfill_skip >= 0),
    backfill_done      INTEGER NOT NULL DEFAULT 0 CHECK (backfill_done IN (0, 1)),
    -- The highest article id stored: a later sync asks for what is newer.
    last_id            INTEGER NOT NULL DEFAULT 0 CHECK (last_id >= 0),
    -- A walk through what is newer, interrupted: the last_id it asks above, its next skip, the
    -- band its items go to.
    head_since         INTEGER,
    head_skip          INTEGER,
    head_band          INTEGER,
    -- The server's counters at the last sync (unread and starred, as text), and when the last
    -- full pass over the unread and starred ids ran.
    counters           TEXT,
    state_at           REAL,
    last_sync_at       REAL,
    last_outcome       TEXT CHECK (last_outcome IN ('ok', 'transient', 'data', 'local')),
    last_error         TEXT,
    CHECK ((head_since IS NULL) = (head_skip IS NULL) AND (head_since IS NULL) = (head_band IS NULL))
);

-- An account's feed is a feed row (its items listed, searched and prefetched as any feed's) that
-- no pull fetches itself: its URL is the account's, with the server's feed id after a '#', and
-- the feed's own address is source_url.
ALTER TABLE feed ADD COLUMN account_id INTEGER REFERENCES account(id) ON DELETE CASCADE;
ALTER TABLE feed ADD COLUMN remote_id INTEGER;
ALTER TABLE feed ADD COLUMN source_url TEXT;
CREATE UNIQUE INDEX feed_remote ON feed (account_id, remote_id) WHERE account_id IS NOT NULL;

-- Who wrote the item, as its source names them (an aggregator's article says; plain text).
ALTER TABLE item ADD COLUMN author TEXT;

-- A star, kept for every item; an account's item also has the server's article id as its key.
ALTER TABLE item ADD COLUMN starred INTEGER NOT NULL DEFAULT 0 CHECK (starred IN (0, 1));
CREATE INDEX item_starred ON item (timeline DESC, feed_id, band, seq) WHERE starred = 1;

-- Marks made on an account's items and not yet accepted by the server: one row per item and
-- field, so a change made twice is sent once, with the value it has now. Removed only once the
-- server accepted it; while it is here, the server's state for that field does not overwrite
-- the item's.
CREATE TABLE sync_status (
    item_id            INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
    field              TEXT NOT NULL CHECK (field IN ('read', 'starred')),
    value              INTEGER NOT NULL CHECK (value IN (0, 1)),
    queued_at          REAL NOT NULL,
    PRIMARY KEY (item_id, field)
) WITHOUT ROWID;
