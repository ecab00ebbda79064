-- feedsync schema, version 20: an item's categories, rules that hide, mark or star what arrives,
-- and saved views.

-- The item's categories (RSS and Atom `category`, JSON Feed `tags`, WordPress terms, an account's
-- labels), one per line, each bounded and plain as a title is; NULL when it has none.
ALTER TABLE item ADD COLUMN categories TEXT;

-- Hidden by a rule: kept, shown only when asked (`list --hidden`). A hidden item holds no place in
-- any list: its seq is -id, below every list's 0, 1, 2 ..., and no band_size, timeline run or
-- read_count counts it, so every list's paging and every unread count leave it out unchanged.
ALTER TABLE item ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1));
-- The hide rule that hid it (its number): when that rule goes, the item is shown again unless
-- another hide rule takes it.
ALTER TABLE item ADD COLUMN hidden_by INTEGER;
CREATE INDEX item_hidden ON item (timeline DESC, feed_id, band, seq) WHERE hidden = 1;

DROP TRIGGER item_inserted_read;
DROP TRIGGER item_deleted_read;
DROP TRIGGER item_marked;
CREATE TRIGGER item_inserted_read AFTER INSERT ON item WHEN new.read = 1 AND new.hidden = 0 BEGIN
    UPDATE feed SET read_count = read_count + 1 WHERE id = new.feed_id;
END;
CREATE TRIGGER item_deleted_read AFTER DELETE ON item WHEN old.read = 1 AND old.hidden = 0 BEGIN
    UPDATE feed SET read_count = read_count - 1 WHERE id = old.feed_id;
END;
-- Hiding and showing an item again recount its feed themselves (Store+Rules.swift).
CREATE TRIGGER item_marked AFTER UPDATE OF read ON item
WHEN old.read != new.read AND old.hidden = 0 AND new.hidden = 0 BEGIN
    UPDATE feed SET read_count = read_count + new.read - old.read WHERE id = new.feed_id;
END;

-- Who wrote an item and its categories, searchable (`list --search`), as item_search is: no copy
-- of the text, a row leaves given the same text. Only items with either have a row.
CREATE VIRTUAL TABLE item_byline USING fts5(
    author, categories, content = '', tokenize = 'unicode61 remove_diacritics 2', columnsize = 0
);
INSERT INTO item_byline (rowid, author, categories) SELECT id, author, categories FROM item WHERE author IS NOT NULL;
CREATE TRIGGER item_deleted_byline AFTER DELETE ON item
WHEN old.author IS NOT NULL OR old.categories IS NOT NULL BEGIN
    INSERT INTO item_byline (item_byline, rowid, author, categories) VALUES ('delete', old.id, old.author, old.categories);
END;
CREATE TRIGGER item_changed_byline AFTER UPDATE OF author, categories ON item
WHEN old.author IS NOT new.author OR old.categories IS NOT new.categories BEGIN
    INSERT INTO item_byline (item_byline, rowid, author, categories)
        SELECT 'delete', old.id, old.author, old.categories WHERE old.author IS NOT NULL OR old.categories IS NOT NULL;
    INSERT INTO item_byline (rowid, author, categories)
        SELECT new.id, new.author, new.categories WHERE new.author IS NOT NULL OR new.categories IS NOT NULL;
END;

-- A rule: what it does to the items its condition (as written, parsed on use) matches, on one
-- feed, a folder and those inside it, or every feed. Applied to items as they arrive, in the
-- transaction that stores them, and to those stored when it is added.
CREATE TABLE rule (
    id                 INTEGER PRIMARY KEY,
    action             TEXT NOT NULL CHECK (action IN ('hide', 'read', 'star')),
    condition          TEXT NOT NULL CHECK (length(condition) BETWEEN 1 AND 4000),
    feed_id            INTEGER REFERENCES feed(id) ON DELETE CASCADE,
    folder             TEXT,
    added_at           REAL NOT NULL,
    CHECK (feed_id IS NULL OR folder IS NULL)
);

-- A saved view: a named condition (its name one in any letter case), listed beside the feeds with
-- its unread count. A view whose condition reads only what an item says (no age, no read or star,
-- no feed, whose name can change) keeps its items (`kept`, view_item): they are found as items
-- arrive, and its unread count is kept by the triggers below, so no count reads its items.
CREATE TABLE saved_view (
    id                 INTEGER PRIMARY KEY,
    name               TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 200),
    condition          TEXT NOT NULL CHECK (length(condition) BETWEEN 1 AND 4000),
    kept               INTEGER NOT NULL CHECK (kept IN (0, 1)),
    unread             INTEGER NOT NULL DEFAULT 0 CHECK (unread >= 0),
    added_at           REAL NOT NULL
);
CREATE TABLE view_item (
    view_id            INTEGER NOT NULL REFERENCES saved_view(id) ON DELETE CASCADE,
    item_id            INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
    PRIMARY KEY (view_id, item_id)
) WITHOUT ROWID;
CREATE INDEX view_item_item ON view_item (item_id);
-- An item counts in its views' unread counts while it is unread and shown.
CREATE TRIGGER view_item_added AFTER INSERT ON view_item BEGIN
    UPDATE saved_view SET unread = unread + 1
    WHERE id = new.view_id AND EXISTS (SELECT 1 FROM item WHERE id = new.item_id AND read = 0 AND hidden = 0);
END;
CREATE TRIGGER view_item_removed AFTER DELETE ON view_item BEGIN
    UPDATE saved_view SET unread = unread - 1
    WHERE id = old.view_id AND EXISTS (SELECT 1 FROM item WHERE id = old.item_id AND read = 0 AND hidden = 0);
END;
-- Before the item goes, while view_item_removed can still read it (a cascade would come after).
CREATE TRIGGER item_deleted_view BEFORE DELETE ON item BEGIN
    DELETE FROM view_item WHERE item_id = old.id;
END;
CREATE TRIGGER item_marked_view AFTER UPDATE OF read, hidden ON item
WHEN (old.read = 0 AND old.hidden = 0) != (new.read = 0 AND new.hidden = 0) BEGIN
    UPDATE saved_view SET unread = unread + (new.read = 0 AND new.hidden = 0) - (old.read = 0 AND old.hidden = 0)
    WHERE id IN (SELECT view_id FROM view_item WHERE item_id = new.id);
END;
