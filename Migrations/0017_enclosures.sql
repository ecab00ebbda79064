-- feedsync schema, version 17: the files an item carries (a podcast's episodes).

-- An item's enclosures other than its picture, in the order its feed gave them: RSS's
-- <enclosure>, Atom's rel="enclosure", Media RSS's sound and video, JSON Feed's attachments. Each
-- part was checked as it was read (an http(s) URL, a media type, a length and a duration in range).
CREATE TABLE item_enclosure (
    item_id            INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
    position           INTEGER NOT NULL CHECK (position >= 0),
    url                TEXT NOT NULL,
    type               TEXT,
    length             INTEGER CHECK (length > 0),
    duration           INTEGER CHECK (duration >= 0),
    PRIMARY KEY (item_id, position)
) WITHOUT ROWID;
