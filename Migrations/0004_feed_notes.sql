-- feedsync schema, version 4: what a pull noticed about a feed that did not stop it.

-- Set when the backfill was ended by feedsync rather than by the feed: a next-page link it will
-- not follow (another scheme than http and https, say). `status` shows it; NULL otherwise.
ALTER TABLE feed ADD COLUMN backfill_note TEXT;

-- Where the last pull found a document that is not well-formed (line, column and libxml2's
-- reason), its items read past the damage, so the user can tell the publisher; NULL otherwise.
ALTER TABLE feed ADD COLUMN malformed TEXT;
