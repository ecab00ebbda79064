-- feedsync schema, version 11: a failure in a feed's history is not the feed's failure.

-- A page past the first that failed (4xx, 5xx, a broken body, the network cut) stops the walk
-- into the feed's history and leaves the feed healthy for its head: why it stopped, once, and
-- when the backfill is tried again (the next pull for a cut, a day for a 4xx or a broken page,
-- the server's Retry-After). A page of history that answers clears both.
ALTER TABLE feed ADD COLUMN history_stop TEXT;
ALTER TABLE feed ADD COLUMN history_retry_at REAL;
