-- feedsync schema, version 15: the picture cache's size, kept as it changes.

-- Every pull starts from what the cache holds (CacheRoom). Summing the picture table for it read
-- every picture's row at each run: 100 000 rows of a large cache, most of a pull with nothing due
-- (BENCHMARKS.md, P13). These triggers keep one row right instead, in the transaction of each
-- change, whoever makes it.
CREATE TABLE cache_total (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    bytes INTEGER NOT NULL,
    count INTEGER NOT NULL
);
INSERT INTO cache_total (id, bytes, count)
SELECT 1, coalesce(sum(bytes), 0), count(*) FROM picture WHERE status = 'cached';

CREATE TRIGGER picture_inserted_total AFTER INSERT ON picture WHEN new.status = 'cached' BEGIN
    UPDATE cache_total SET bytes = bytes + coalesce(new.bytes, 0), count = count + 1;
END;
CREATE TRIGGER picture_changed_total AFTER UPDATE OF status, bytes ON picture
WHEN old.status = 'cached' OR new.status = 'cached' BEGIN
    UPDATE cache_total SET
        bytes = bytes - (CASE WHEN old.status = 'cached' THEN coalesce(old.bytes, 0) ELSE 0 END)
            + (CASE WHEN new.status = 'cached' THEN coalesce(new.bytes, 0) ELSE 0 END),
        count = count - (old.status = 'cached') + (new.status = 'cached');
END;
CREATE TRIGGER picture_deleted_total AFTER DELETE ON picture WHEN old.status = 'cached' BEGIN
    UPDATE cache_total SET bytes = bytes - coalesce(old.bytes, 0), count = count - 1;
END;
