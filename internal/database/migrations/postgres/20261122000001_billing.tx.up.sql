-- Plans, users, API keys and rate-limit counters (package billing).
CREATE TABLE plans (
    id                      UUID PRIMARY KEY,
    slug                    TEXT NOT NULL UNIQUE,
    name                    TEXT NOT NULL,
    price                   NUMERIC(38, 18) NOT NULL,
    currency                TEXT NOT NULL,
    interval                TEXT NOT NULL,
    api_requests_per_day    INTEGER NOT NULL,
    api_requests_per_minute INTEGER NOT NULL,
    watchlists              INTEGER NOT NULL,
    portfolios              INTEGER NOT NULL,
    alerts                  INTEGER NOT NULL,
    sort_order              INTEGER NOT NULL
);

--bun:split

INSERT INTO plans VALUES
    ('5b0c3f4e-2f43-4d36-9a5c-000000000001', 'free',     'Free',     0,  'USD', 'month', 1000,   30,  1,  1,   5,  1),
    ('5b0c3f4e-2f43-4d36-9a5c-000000000002', 'pro',      'Pro',      29, 'USD', 'month', 10000,  120, 10, 5,   50, 2),
    ('5b0c3f4e-2f43-4d36-9a5c-000000000003', 'business', 'Business', 99, 'USD', 'month', 100000, 600, 50, 25, 500, 3);

--bun:split

CREATE TABLE users (
    id         UUID PRIMARY KEY,
    email      TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    plan_id    UUID NOT NULL REFERENCES plans (id),
    is_admin   BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL
);

--bun:split

CREATE TABLE api_keys (
    id           UUID PRIMARY KEY,
    user_id      UUID NOT NULL REFERENCES users (id),
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
);

--bun:split

CREATE INDEX api_keys_user_id_idx ON api_keys (user_id);

--bun:split

CREATE INDEX api_keys_revoked_at_idx ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;

--bun:split

-- One row per user and fixed window: window is 'm' (minute) or 'd' (day),
-- window_start the window's first second as Unix time. UNLOGGED: a request's
-- counter update writes no WAL and its commit waits for no flush, so the one
-- hot row of a busy user is locked for microseconds, not an fsync. A crash
-- resets the counters, which costs at most one window's allowance.
CREATE UNLOGGED TABLE rate_counters (
    user_id      UUID NOT NULL,
    window_kind  TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (user_id, window_kind, window_start)
);
