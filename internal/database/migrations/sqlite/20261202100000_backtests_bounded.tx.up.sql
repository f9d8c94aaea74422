-- Package backtest/backtestdb: one stored result per user and strategy
-- hash (a rerun replaces it), and the leases of the backtests running.
-- Only the newest result of each user and hash is kept; results stored
-- before keep their size (only new runs are bounded).
DELETE FROM backtests WHERE EXISTS (
    SELECT 1 FROM backtests AS newer
    WHERE newer.user_id = backtests.user_id AND newer.strategy_hash = backtests.strategy_hash
      AND (newer.created_at > backtests.created_at OR (newer.created_at = backtests.created_at AND newer.id > backtests.id)));

--bun:split

DROP INDEX backtests_user_hash;

--bun:split

CREATE UNIQUE INDEX backtests_user_strategy ON backtests (user_id, strategy_hash);

--bun:split

-- A backtest running for a member of an account: a lease its instance
-- renews while the run lasts, so that an account's runs are counted
-- across instances and a dead instance's lease lapses at expires_at.
CREATE TABLE backtest_runs (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id),
    expires_at TIMESTAMP NOT NULL
);

--bun:split

CREATE INDEX backtest_runs_account ON backtest_runs (account_id, expires_at);
