-- Market-data feeds (package marketdata/feed): each run of a provider's
-- feed, each trading day it fetched with its outcome (a failed day is
-- fetched again by the next run), the lease that lets one instance
-- at a time run a provider's feed, and the next run planned.
CREATE TABLE feed_runs (
    id          UUID PRIMARY KEY,
    provider    TEXT NOT NULL,
    instance    TEXT NOT NULL,
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    outcome     TEXT NOT NULL,
    from_date   DATE NOT NULL,
    to_date     DATE NOT NULL,
    days        BIGINT NOT NULL DEFAULT 0,
    failed_days BIGINT NOT NULL DEFAULT 0,
    rows_stored BIGINT NOT NULL DEFAULT 0,
    new_assets  BIGINT NOT NULL DEFAULT 0,
    actions     BIGINT NOT NULL DEFAULT 0,
    changed     BIGINT NOT NULL DEFAULT 0,
    error       TEXT NOT NULL DEFAULT ''
);

--bun:split

CREATE INDEX feed_runs_provider_started ON feed_runs (provider, started_at);

--bun:split

CREATE TABLE feed_days (
    provider   TEXT NOT NULL,
    date       DATE NOT NULL,
    status     TEXT NOT NULL,
    rows_stored BIGINT NOT NULL DEFAULT 0,
    attempts   BIGINT NOT NULL DEFAULT 0,
    error      TEXT NOT NULL DEFAULT '',
    run_id     UUID NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (provider, date)
);

--bun:split

CREATE TABLE feed_leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

--bun:split

-- The next daily run each provider's scheduler (serve --feed) plans, for
-- feed status and GET /api/v1/market-data/feeds.
CREATE TABLE feed_schedules (
    provider    TEXT PRIMARY KEY,
    next_run_at TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
