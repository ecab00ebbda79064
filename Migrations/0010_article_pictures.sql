-- feedsync schema, version 10: the pictures inside an item's content, so an article reads whole
-- offline.

-- One row per picture an item's content shows (ArticlePictures: one per <img> or <picture>, at
-- most 24), in the content's order. The picture row is shared with every other item and every
-- thumbnail that names the same URL: it is downloaded and stored once. `source` is the reference
-- as the content writes it, by which the reading page finds the picture in the content again.
-- Items stored before this version have theirs found by the migration's Swift step (Store.swift).
CREATE TABLE item_content_picture (
    item_id            INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
    position           INTEGER NOT NULL CHECK (position BETWEEN 0 AND 23),
    picture_id         INTEGER NOT NULL REFERENCES picture(id),
    source             TEXT NOT NULL,
    PRIMARY KEY (item_id, position)
) WITHOUT ROWID;
CREATE INDEX item_content_picture_picture ON item_content_picture (picture_id);
