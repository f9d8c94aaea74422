-- Package copytrading: a leader's Sharpe ratio and maximum drawdown are
-- NULL while they do not exist (too short a history), and the figures
-- are rounded to 8 places. (SQLite replaces each column by a nullable one
-- of the same name.) stats_at is cleared, so that every profile's figures
-- are computed again on the next read.
ALTER TABLE leader_profiles ALTER COLUMN sharpe_ratio DROP NOT NULL, ALTER COLUMN sharpe_ratio DROP DEFAULT;

--bun:split

ALTER TABLE leader_profiles ALTER COLUMN max_drawdown DROP NOT NULL, ALTER COLUMN max_drawdown DROP DEFAULT;

--bun:split

UPDATE leader_profiles SET stats_at = NULL;
