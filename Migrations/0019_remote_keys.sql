-- feedsync schema, version 19: accounts on a Google Reader API server (FreshRSS, Miniflux,
-- Inoreader, The Old Reader, BazQux) beside Tiny Tiny RSS. Their ids are the server's strings
-- (`feed/3`, `feed/http://…`, 24-digit ObjectIds), so a feed's remote id is text; and a walk goes
-- on from the place the server gave after its last committed page (a continuation), where Tiny
-- Tiny RSS's is the count of articles behind it, kept as that count's text. A Google Reader
-- server marks a whole stream read up to a time in one call: `mark read --all` queues that.

CREATE TABLE account_new (
    id                 INTEGER PRIMARY KEY,
    name               TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    kind               TEXT NOT NULL CHECK (kind IN ('ttrss', 'greader')),
    -- The API's URL (Tiny Tiny RSS: .../api/; a Google Reader server: the base its paths follow).
    url                TEXT NOT NULL CHECK (url LIKE 'http://%' OR url LIKE 'https://%'),
    user_name          TEXT NOT NULL,
    added_at           REAL NOT NULL,
    -- The first sync's walk through every article, newest first: the place its next page starts
    -- (NULL: the start), and whether it is over.
    backfill_place     TEXT CHECK (length(backfill_place) <= 1024),
    backfill_done      INTEGER NOT NULL DEFAULT 0 CHECK (backfill_done IN (0, 1)),
    -- The newest article id stored: a later sync asks for what is newer.
    last_id            TEXT CHECK (length(last_id) <= 1024),
    -- A walk through what is newer, interrupted: the id it asks above, its next place, the band its
    -- items go to.
    head_since         TEXT,
    head_place         TEXT CHECK (length(head_place) <= 1024),
    head_band          INTEGER,
    -- The server's counters at the last sync (as text; NULL where the server has none), and when
    -- the last full pass over the unread and starred ids ran.
    counters           TEXT,
    state_at           REAL,
    -- The newest item time the server gave (a Google Reader server's timestampUsec): a stream is
    -- marked read up to it, so nothing that arrived after is marked.
    newest_time        INTEGER CHECK (newest_time >= 0),
    last_sync_at       REAL,
    last_outcome       TEXT CHECK (last_outcome IN ('ok', 'transient', 'data', 'local')),
    last_error         TEXT,
    CHECK ((head_place IS NULL) = (head_band IS NULL) AND (head_since IS NULL OR head_place IS NOT NULL))
);

INSERT INTO account_new
SELECT id, name, kind, url, user_name, added_at,
    CASE WHEN backfill_skip > 0 THEN CAST(backfill_skip AS TEXT) END, backfill_done,
    CASE WHEN last_id > 0 THEN CAST(last_id AS TEXT) END,
    CASE WHEN head_since > 0 THEN CAST(head_since AS TEXT) END, CAST(head_skip AS TEXT), head_band,
    counters, state_at, NULL, last_sync_at, last_outcome, last_error
FROM account;

DROP TABLE account;
ALTER TABLE account_new RENAME TO account;

DROP INDEX feed_remote;
ALTER TABLE feed ADD COLUMN remote_key TEXT;
UPDATE feed SET remote_key = CAST(remote_id AS TEXT) WHERE remote_id IS NOT NULL;
ALTER TABLE feed DROP COLUMN remote_id;
CREATE UNIQUE INDEX feed_remote ON feed (account_id, remote_key) WHERE account_id IS NOT NULL;

-- A stream of an account marked read up to a time (`mark read --all`, of a feed, a folder or
-- everything) and not yet accepted by the server: one row per stream, the latest wins. While it
-- is here, the server's read state does not overwrite the items it covers.
CREATE TABLE sync_catchup (
    account_id         INTEGER NOT NULL REFERENCES account(id) ON DELETE CASCADE,
    stream             TEXT NOT NULL,
    up_to              INTEGER NOT NULL CHECK (up_to >= 0),
    queued_at          REAL NOT NULL,
    PRIMARY KEY (account_id, stream)
) WITHOUT ROWID;

-- Ids a server lists as unread or starred but did not give when asked for them (gone there, or
-- unusable): not asked again while it lists them.
CREATE TABLE remote_missing (
    account_id         INTEGER NOT NULL REFERENCES account(id) ON DELETE CASCADE,
    key                TEXT NOT NULL,
    PRIMARY KEY (account_id, key)
) WITHOUT ROWID;
