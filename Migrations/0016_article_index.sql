-- feedsync schema, version 16: a stored article's search row written by the store, after its
-- batch's other rows.

-- A trigger wrote each stored article's row in article_search as the article's own row went in.
-- A statement with a trigger keeps a statement journal, and FTS5 writes its pending terms to disk
-- at each such statement: every article became an index segment of its own, a third of storing
-- it (BENCHMARKS.md, P12). Store.keepArticles writes the rows itself, after a batch's other
-- statements, in the same transaction: a killed pull still leaves no stored article unindexed.
DROP TRIGGER item_article_stored;
