-- Package brokers/connect: users' broker connections (OAuth tokens sealed
-- with AES-256-GCM, never in plaintext), the single-use OAuth states of
-- pending connections, sync runs and their log, and the portfolio each
-- active connection owns (balances, positions, fills, daily equity).
CREATE TABLE broker_connections (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users (id),
    provider        TEXT NOT NULL,
    status          TEXT NOT NULL,
    redirect_url    TEXT NOT NULL,
    account_id      TEXT NOT NULL DEFAULT '',
    account_name    TEXT NOT NULL DEFAULT '',
    access_token    TEXT,
    refresh_token   TEXT,
    token_expiry    TIMESTAMP,
    last_error      TEXT NOT NULL DEFAULT '',
    sync_id         TEXT,
    sync_status     TEXT NOT NULL DEFAULT '',
    sync_started_at TIMESTAMP,
    last_sync_at    TIMESTAMP,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL
);

--bun:split

CREATE INDEX broker_connections_user_idx ON broker_connections (user_id, created_at);

--bun:split

CREATE INDEX broker_connections_sync_idx ON broker_connections (status, last_sync_at);

--bun:split

CREATE TABLE broker_oauth_states (
    state_hash    TEXT PRIMARY KEY,
    connection_id TEXT NOT NULL REFERENCES broker_connections (id),
    code_verifier TEXT NOT NULL,
    expires_at    TIMESTAMP NOT NULL,
    used_at       TIMESTAMP
);

--bun:split

CREATE TABLE broker_sync_logs (
    id               TEXT PRIMARY KEY,
    connection_id    TEXT NOT NULL REFERENCES broker_connections (id),
    status           TEXT NOT NULL,
    positions_synced INTEGER,
    error            TEXT NOT NULL DEFAULT '',
    started_at       TIMESTAMP NOT NULL,
    completed_at     TIMESTAMP
);

--bun:split

CREATE INDEX broker_sync_logs_connection_idx ON broker_sync_logs (connection_id, started_at);

--bun:split

CREATE TABLE portfolios (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id),
    connection_id TEXT NOT NULL UNIQUE REFERENCES broker_connections (id),
    currency      TEXT NOT NULL,
    cash          TEXT NOT NULL,
    equity        TEXT NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);

--bun:split

CREATE TABLE portfolio_positions (
    portfolio_id  TEXT NOT NULL REFERENCES portfolios (id),
    symbol        TEXT NOT NULL,
    asset_id      TEXT,
    quantity      TEXT NOT NULL,
    average_cost  TEXT NOT NULL,
    broker_value  TEXT,
    PRIMARY KEY (portfolio_id, symbol)
);

--bun:split

CREATE TABLE portfolio_fills (
    portfolio_id TEXT NOT NULL REFERENCES portfolios (id),
    broker_id    TEXT NOT NULL,
    symbol       TEXT NOT NULL,
    side         TEXT NOT NULL,
    quantity     TEXT NOT NULL,
    price        TEXT NOT NULL,
    filled_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (portfolio_id, broker_id)
);

--bun:split

CREATE TABLE portfolio_equity (
    portfolio_id TEXT NOT NULL REFERENCES portfolios (id),
    date         TEXT NOT NULL,
    equity       TEXT NOT NULL,
    PRIMARY KEY (portfolio_id, date)
);
