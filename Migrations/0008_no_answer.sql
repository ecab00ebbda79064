-- feedsync schema, version 8: failures where no server answered, counted apart.

-- Pulls in a row that got no answer at all (no name, refused, unreachable, reset or timed out
-- before any header): the network's failure more often than the feed's. The first three leave the
-- feed due, so the next pull continues where the network cut it off; from the fourth it backs off
-- as other failures do (a dead host). A pull the server answered sets it back to 0.
ALTER TABLE feed ADD COLUMN unanswered INTEGER NOT NULL DEFAULT 0 CHECK (unanswered >= 0);
