-- feedsync schema, version 14: whole articles for feeds that publish teasers.

-- The user asked for the page behind each item (`add --full-text`, `full-text F on`).
ALTER TABLE feed ADD COLUMN full_text INTEGER NOT NULL DEFAULT 0 CHECK (full_text IN (0, 1));
-- The last page stored was summaries: eight items in ten a few lines long, with a web link
-- (`feeds` and `status` then suggest `full-text`). Set with each page's commit.
ALTER TABLE feed ADD COLUMN summary_only INTEGER NOT NULL DEFAULT 0 CHECK (summary_only IN (0, 1));

-- The article extracted from an item's page, or why there is none yet. `link` is the item's link
-- it was fetched for: when the feed changes the item's link, the row no longer holds and the
-- page is fetched again. A failure is the article's, not the feed's: it is tried again after
-- `next_attempt_at`, later after each failure.
CREATE TABLE item_article (
    item_id            INTEGER PRIMARY KEY REFERENCES item(id) ON DELETE CASCADE,
    link               TEXT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('stored', 'failed')),
    -- The article's HTML as the page wrote it (made safe where shown), at most 1 MB.
    html               TEXT,
    title              TEXT,
    byline             TEXT,
    error              TEXT,
    attempts           INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at    REAL,
    fetched_at         REAL NOT NULL,
    CHECK ((status = 'stored') = (html IS NOT NULL))
);

-- The stored articles' text, searched beside the items' own (item_search): contentless like it,
-- a row leaving by FTS5's 'delete' given the text it was indexed with, made again from the html.
CREATE VIRTUAL TABLE article_search USING fts5(
    body, content = '', tokenize = 'unicode61 remove_diacritics 2', columnsize = 0
);
CREATE TRIGGER item_article_stored AFTER INSERT ON item_article WHEN new.status = 'stored' BEGIN
    INSERT INTO article_search (rowid, body) VALUES (new.item_id, search_body(new.html, NULL));
END;
CREATE TRIGGER item_article_left AFTER DELETE ON item_article WHEN old.status = 'stored' BEGIN
    INSERT INTO article_search (article_search, rowid, body)
    VALUES ('delete', old.item_id, search_body(old.html, NULL));
END;
