-- Package backtest/backtestdb: the results of backtests run through the
-- API, by the user and the strategy hash (the SHA-256 of the strategy's
-- canonical JSON). document is the API's JSON of the result, kept to be
-- served again; total_return and sharpe_ratio are copied out of it for
-- the published strategies' list (NULL when not finite).
CREATE TABLE backtests (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id),
    strategy_hash TEXT NOT NULL,
    document      TEXT NOT NULL,
    total_return  REAL,
    sharpe_ratio  REAL,
    created_at    TIMESTAMP NOT NULL
);
CREATE INDEX backtests_user_hash ON backtests (user_id, strategy_hash, created_at);
