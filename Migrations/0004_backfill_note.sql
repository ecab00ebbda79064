-- feedsync schema, version 4: why a backfill ended before the feed's last page.

-- Set when the backfill was ended by feedsync rather than by the feed: a next-page link it will
-- not follow (another scheme than http and https, say). `status` shows it; NULL otherwise.
ALTER TABLE feed ADD COLUMN backfill_note TEXT;
