-- feedsync schema, version 2: feeds in formats other than the seed, and the links they page by.

-- Whether `format` was chosen with --format (kept) rather than found in the documents (updated
-- when the documents say otherwise). 'auto' means not found yet: the feed was never pulled.
ALTER TABLE feed ADD COLUMN format_chosen INTEGER NOT NULL DEFAULT 0 CHECK (format_chosen IN (0, 1));
UPDATE feed SET format = 'auto' WHERE backfill_page IS NULL;

-- Formats that link their pages (JSON Feed's next_url, rel="next", rel="prev-archive") are resumed
-- from the saved link, not from a page number: the next older document for the backfill, and the
-- next document of an interrupted head walk.
ALTER TABLE feed ADD COLUMN backfill_url TEXT CHECK (backfill_url LIKE 'http://%' OR backfill_url LIKE 'https://%');
ALTER TABLE feed ADD COLUMN gap_url TEXT CHECK (gap_url LIKE 'http://%' OR gap_url LIKE 'https://%');
