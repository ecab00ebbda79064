-- feedsync schema, version 5: what a reader keeps beside the sync state — feed titles and folders,
-- read marks, each item's full content.

-- The feed's own title and site, from its documents; a title the user gave (`add --title`,
-- `rename`, an OPML outline), which wins; the OPML folder, its levels joined by "/".
ALTER TABLE feed ADD COLUMN title TEXT;
ALTER TABLE feed ADD COLUMN site_url TEXT CHECK (site_url LIKE 'http://%' OR site_url LIKE 'https://%');
ALTER TABLE feed ADD COLUMN custom_title TEXT;
ALTER TABLE feed ADD COLUMN folder TEXT;

-- Read marks. New items arrive unread; so do the items stored before marks existed.
ALTER TABLE item ADD COLUMN read INTEGER NOT NULL DEFAULT 0 CHECK (read IN (0, 1));

-- The item's full content as HTML (content:encoded, Atom content, JSON Feed content_html, ...,
-- else RSS's description), at most 256 KB; NULL when the item has no body at all.
ALTER TABLE item ADD COLUMN content TEXT;

-- How many of the feed's items are read, kept by the triggers below, so a feed's unread count is
-- its item count (band_size) less this, with no scan of its items. New items are unread, so the
-- page commit's inserts fire nothing.
ALTER TABLE feed ADD COLUMN read_count INTEGER NOT NULL DEFAULT 0 CHECK (read_count >= 0);

CREATE TRIGGER item_inserted_read AFTER INSERT ON item WHEN new.read = 1 BEGIN
    UPDATE feed SET read_count = read_count + 1 WHERE id = new.feed_id;
END;
CREATE TRIGGER item_deleted_read AFTER DELETE ON item WHEN old.read = 1 BEGIN
    UPDATE feed SET read_count = read_count - 1 WHERE id = old.feed_id;
END;
CREATE TRIGGER item_marked AFTER UPDATE OF read ON item WHEN old.read != new.read BEGIN
    UPDATE feed SET read_count = read_count + new.read - old.read WHERE id = new.feed_id;
END;
