-- Package backtest/backtestdb: the results of backtests run through the
-- API, by the user and the strategy hash (the SHA-256 of the strategy's
-- canonical JSON). document is the API's JSON of the result, kept to be
-- served again; total_return and sharpe_ratio are copied out of it for
-- the published strategies' list (NULL when not finite).
CREATE TABLE backtests (
    id            UUID PRIMARY KEY,
    user_id       UUID NOT NULL REFERENCES users (id),
    strategy_hash TEXT NOT NULL,
    document      TEXT NOT NULL,
    total_return  DOUBLE PRECISION,
    sharpe_ratio  DOUBLE PRECISION,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX backtests_user_hash ON backtests (user_id, strategy_hash, created_at);
