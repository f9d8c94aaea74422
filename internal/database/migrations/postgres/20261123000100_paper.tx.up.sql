-- The paper broker (package brokers/paper): accounts opened on its OAuth
-- consent page, their positions and orders, the authorization codes
-- (grants) and the tokens issued from them. Codes and tokens are stored
-- only as the hex SHA-256 of their text.
CREATE TABLE paper_accounts (
    id            UUID PRIMARY KEY,
    number        TEXT NOT NULL UNIQUE,
    client_id     TEXT NOT NULL,
    currency      TEXT NOT NULL,
    starting_cash NUMERIC(38, 18) NOT NULL,
    cash          NUMERIC(38, 18) NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);

--bun:split

-- One row per open position; a position sold down to zero is deleted.
CREATE TABLE paper_positions (
    account_id      UUID NOT NULL REFERENCES paper_accounts (id),
    symbol          TEXT NOT NULL,
    qty             NUMERIC(38, 18) NOT NULL,
    avg_entry_price NUMERIC(38, 18) NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (account_id, symbol)
);

--bun:split

-- seq numbers an account's orders from 1 in the order they were recorded:
-- replaying the filled ones in seq order rebuilds the account's history.
CREATE TABLE paper_orders (
    id               UUID PRIMARY KEY,
    account_id       UUID NOT NULL REFERENCES paper_accounts (id),
    seq              BIGINT NOT NULL,
    client_order_id  TEXT NOT NULL,
    asset_id         UUID,
    symbol           TEXT NOT NULL,
    asset_class      TEXT NOT NULL,
    side             TEXT NOT NULL,
    type             TEXT NOT NULL,
    time_in_force    TEXT NOT NULL,
    status           TEXT NOT NULL,
    qty              NUMERIC(38, 18) NOT NULL,
    filled_qty       NUMERIC(38, 18) NOT NULL,
    filled_avg_price NUMERIC(38, 18),
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
    submitted_at     TIMESTAMPTZ NOT NULL,
    filled_at        TIMESTAMPTZ,
    canceled_at      TIMESTAMPTZ,
    UNIQUE (account_id, seq),
    UNIQUE (account_id, client_order_id)
);

--bun:split

CREATE INDEX paper_orders_submitted_idx ON paper_orders (account_id, submitted_at);

--bun:split

-- An authorization code, single use: used_at is set when it is redeemed.
CREATE TABLE paper_grants (
    id             UUID PRIMARY KEY,
    code_hash      TEXT NOT NULL UNIQUE,
    client_id      TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    scope          TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    account_id     UUID NOT NULL REFERENCES paper_accounts (id),
    created_at     TIMESTAMPTZ NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL,
    used_at        TIMESTAMPTZ
);

--bun:split

-- Access and refresh tokens. Every token descends from one grant, so that
-- a reused code or a revoked refresh token revokes them all.
CREATE TABLE paper_tokens (
    id         UUID PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    grant_id   UUID NOT NULL REFERENCES paper_grants (id),
    account_id UUID NOT NULL REFERENCES paper_accounts (id),
    client_id  TEXT NOT NULL,
    scope      TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ
);

--bun:split

CREATE INDEX paper_tokens_grant_idx ON paper_tokens (grant_id);
