-- feedsync schema, version 9: the search index keeps no copy of the text it indexes.

-- An FTS5 table keeps every row's text beside its index unless told not to: a second copy of each
-- item's title and body, as large as the items' own text. A contentless index (content = '')
-- keeps only the index. A row leaves it by FTS5's 'delete' command given the very text it was
-- indexed with, which the item's columns make again: search_title and search_body are
-- SearchText.title and SearchText.body, registered on every connection of the store
-- (Store.swift). The items already stored are indexed again by the migration's Swift step.
DROP TRIGGER item_deleted_search;
DROP TABLE item_search;
CREATE VIRTUAL TABLE item_search USING fts5(
    title, body, content = '', tokenize = 'unicode61 remove_diacritics 2', columnsize = 0
);
CREATE TRIGGER item_deleted_search AFTER DELETE ON item BEGIN
    INSERT INTO item_search (item_search, rowid, title, body)
    VALUES ('delete', old.id, search_title(old.title), search_body(old.content, old.summary));
END;
-- A pull that finds an item's text changed updates the row: its index follows. (New items are
-- indexed by the page commit itself, with the text the parser made.)
CREATE TRIGGER item_changed_search AFTER UPDATE OF title, summary, content ON item
WHEN old.title IS NOT new.title OR old.summary IS NOT new.summary OR old.content IS NOT new.content BEGIN
    INSERT INTO item_search (item_search, rowid, title, body)
    VALUES ('delete', old.id, search_title(old.title), search_body(old.content, old.summary));
    INSERT INTO item_search (rowid, title, body)
    VALUES (new.id, search_title(new.title), search_body(new.content, new.summary));
END;
