-- Package brokers/connect: users' broker connections (OAuth tokens sealed
-- with AES-256-GCM, never in plaintext), the single-use OAuth states of
-- pending connections, sync runs and their log, and the portfolio each
-- active connection owns (balances, positions, fills, daily equity).
CREATE TABLE broker_connections (
    id              UUID PRIMARY KEY,
    user_id         UUID NOT NULL REFERENCES users (id),
    provider        TEXT NOT NULL,
    status          TEXT NOT NULL,
    redirect_url    TEXT NOT NULL,
    account_id      TEXT NOT NULL DEFAULT '',
    account_name    TEXT NOT NULL DEFAULT '',
    access_token    TEXT,
    refresh_token   TEXT,
    token_expiry    TIMESTAMPTZ,
    last_error      TEXT NOT NULL DEFAULT '',
    sync_id         UUID,
    sync_status     TEXT NOT NULL DEFAULT '',
    sync_started_at TIMESTAMPTZ,
    last_sync_at    TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);

--bun:split

CREATE INDEX broker_connections_user_idx ON broker_connections (user_id, created_at);

--bun:split

CREATE INDEX broker_connections_sync_idx ON broker_connections (status, last_sync_at);

--bun:split

CREATE TABLE broker_oauth_states (
    state_hash    TEXT PRIMARY KEY,
    connection_id UUID NOT NULL REFERENCES broker_connections (id),
    code_verifier TEXT NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL,
    used_at       TIMESTAMPTZ
);

--bun:split

CREATE TABLE broker_sync_logs (
    id               UUID PRIMARY KEY,
    connection_id    UUID NOT NULL REFERENCES broker_connections (id),
    status           TEXT NOT NULL,
    positions_synced INTEGER,
    error            TEXT NOT NULL DEFAULT '',
    started_at       TIMESTAMPTZ NOT NULL,
    completed_at     TIMESTAMPTZ
);

--bun:split

CREATE INDEX broker_sync_logs_connection_idx ON broker_sync_logs (connection_id, started_at);

--bun:split

CREATE TABLE portfolios (
    id            UUID PRIMARY KEY,
    user_id       UUID NOT NULL REFERENCES users (id),
    connection_id UUID NOT NULL UNIQUE REFERENCES broker_connections (id),
    currency      TEXT NOT NULL,
    cash          NUMERIC(38, 18) NOT NULL,
    equity        NUMERIC(38, 18) NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

--bun:split

CREATE TABLE portfolio_positions (
    portfolio_id  UUID NOT NULL REFERENCES portfolios (id),
    symbol        TEXT NOT NULL,
    asset_id      UUID,
    quantity      NUMERIC(38, 18) NOT NULL,
    average_cost  NUMERIC(38, 18) NOT NULL,
    broker_value  NUMERIC(38, 18),
    PRIMARY KEY (portfolio_id, symbol)
);

--bun:split

CREATE TABLE portfolio_fills (
    portfolio_id UUID NOT NULL REFERENCES portfolios (id),
    broker_id    TEXT NOT NULL,
    symbol       TEXT NOT NULL,
    side         TEXT NOT NULL,
    quantity     NUMERIC(38, 18) NOT NULL,
    price        NUMERIC(38, 18) NOT NULL,
    filled_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (portfolio_id, broker_id)
);

--bun:split

CREATE TABLE portfolio_equity (
    portfolio_id UUID NOT NULL REFERENCES portfolios (id),
    date         DATE NOT NULL,
    equity       NUMERIC(38, 18) NOT NULL,
    PRIMARY KEY (portfolio_id, date)
);
