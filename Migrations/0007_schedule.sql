-- feedsync schema, version 7: when each feed is next asked, and what its server said about it.

-- The next time a plain `pull` asks for the feed (NULL: at once), and why then, in words
-- ("ttl 60 min", "3 failures in a row"). `next_retry_at` stays the time before which the server
-- asked not to be asked at all (Retry-After), which only `pull --force` overrides.
ALTER TABLE feed ADD COLUMN due_at REAL;
ALTER TABLE feed ADD COLUMN due_reason TEXT;
-- Pulls in a row that failed (network, 5xx, 4xx other than 429); a success sets it back to 0.
ALTER TABLE feed ADD COLUMN failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0);

-- What the feed's last head document said about its schedule, kept for the pulls that get a 304:
-- RSS <ttl> in minutes, sy:updatePeriod / sy:updateFrequency as seconds, and RSS skipHours and
-- skipDays as bit masks (bit h: hour h UTC; bit d: day d, Sunday 0).
ALTER TABLE feed ADD COLUMN ttl INTEGER CHECK (ttl >= 0);
ALTER TABLE feed ADD COLUMN update_interval INTEGER CHECK (update_interval > 0);
ALTER TABLE feed ADD COLUMN skip_hours INTEGER NOT NULL DEFAULT 0 CHECK (skip_hours BETWEEN 0 AND 16777215);
ALTER TABLE feed ADD COLUMN skip_days INTEGER NOT NULL DEFAULT 0 CHECK (skip_days BETWEEN 0 AND 127);

-- A hash of the last head document read: a 200 with the same body is not parsed again.
ALTER TABLE feed ADD COLUMN body_hash TEXT;

-- Permanent redirects (301, 308) of the feed URL: the target seen at the last pull; the URL moves
-- there when the next pull sees the same one. `moved_from` and `moved_at` say it moved.
ALTER TABLE feed ADD COLUMN redirect_url TEXT;
ALTER TABLE feed ADD COLUMN moved_from TEXT;
ALTER TABLE feed ADD COLUMN moved_at REAL;

-- The server answered 410 Gone: the feed is not asked again; `remove` clears it.
ALTER TABLE feed ADD COLUMN gone_at REAL;
