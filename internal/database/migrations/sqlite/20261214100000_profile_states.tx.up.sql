-- Package profiledb: the state each profile leaves for the next day's
-- update (profiles.State in its versioned binary form), so that a day
-- appended to an asset's prices updates its profile from the day before
-- instead of recomputing it whole. NULL for a profile built before this
-- column existed, or by a build that keeps none: its next build is then
-- a full one.
ALTER TABLE profiles ADD COLUMN state BLOB;
