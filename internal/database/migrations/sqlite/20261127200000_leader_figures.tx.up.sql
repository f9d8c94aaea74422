-- Package copytrading: a leader's Sharpe ratio and maximum drawdown are
-- NULL while they do not exist (too short a history), and the figures
-- are rounded to 8 places. SQLite cannot drop a NOT NULL constraint in
-- place, so each column is replaced by a nullable one of the same name
-- (PostgreSQL drops the constraint). stats_at is cleared, so that every
-- profile's figures are computed again on the next read.
ALTER TABLE leader_profiles ADD COLUMN sharpe_ratio_new REAL;

--bun:split

ALTER TABLE leader_profiles DROP COLUMN sharpe_ratio;

--bun:split

ALTER TABLE leader_profiles RENAME COLUMN sharpe_ratio_new TO sharpe_ratio;

--bun:split

ALTER TABLE leader_profiles ADD COLUMN max_drawdown_new REAL;

--bun:split

ALTER TABLE leader_profiles DROP COLUMN max_drawdown;

--bun:split

ALTER TABLE leader_profiles RENAME COLUMN max_drawdown_new TO max_drawdown;

--bun:split

UPDATE leader_profiles SET stats_at = NULL;
