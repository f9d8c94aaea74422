-- Package alerts: watchlists, price alerts on formula conditions, and
-- webhooks with their deliveries. An alert or a webhook is never deleted:
-- deleting stamps deleted_at and keeps its firings and deliveries.
-- checked_version and checked_through are an alert's watermark: the price
-- version of its asset and the date of the last bar it has evaluated.
-- alert_firings holds one row per alert and bar: its primary key is what
-- makes a firing happen once across instances. webhook_deliveries holds
-- one row per notification and webhook, unique, and the state of its
-- attempts.
CREATE TABLE watchlists (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id),
    name       TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

--bun:split

CREATE INDEX watchlists_user_idx ON watchlists (user_id, created_at);

--bun:split

CREATE TABLE watchlist_assets (
    watchlist_id TEXT NOT NULL REFERENCES watchlists (id) ON DELETE CASCADE,
    asset_id     TEXT NOT NULL REFERENCES assets (id),
    added_at     TIMESTAMP NOT NULL,
    PRIMARY KEY (watchlist_id, asset_id)
);

--bun:split

CREATE TABLE webhooks (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id),
    url        TEXT NOT NULL,
    secret     TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    deleted_at TIMESTAMP
);

--bun:split

CREATE INDEX webhooks_user_idx ON webhooks (user_id) WHERE deleted_at IS NULL;

--bun:split

CREATE TABLE alerts (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users (id),
    asset_id        TEXT NOT NULL REFERENCES assets (id),
    name            TEXT NOT NULL,
    condition       TEXT NOT NULL,
    webhook_id      TEXT REFERENCES webhooks (id),
    once            BOOLEAN NOT NULL,
    status          TEXT NOT NULL,
    checked_version BIGINT NOT NULL,
    checked_through TEXT NOT NULL,
    fired_count     INTEGER NOT NULL DEFAULT 0,
    last_fired_at   TIMESTAMP,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    deleted_at      TIMESTAMP
);

--bun:split

CREATE INDEX alerts_user_idx ON alerts (user_id, created_at) WHERE deleted_at IS NULL;

--bun:split

CREATE INDEX alerts_active_idx ON alerts (asset_id) WHERE status = 'active';

--bun:split

CREATE TABLE alert_firings (
    alert_id        TEXT NOT NULL REFERENCES alerts (id),
    bar_date        TEXT NOT NULL,
    notification_id TEXT NOT NULL REFERENCES notifications (id),
    fired_at        TIMESTAMP NOT NULL,
    PRIMARY KEY (alert_id, bar_date)
);

--bun:split

CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id),
    notification_id TEXT NOT NULL REFERENCES notifications (id),
    kind            TEXT NOT NULL,
    payload         TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    lease_until     TIMESTAMP,
    response_status INTEGER,
    latency_ms      INTEGER,
    error           TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL,
    last_attempt_at TIMESTAMP,
    delivered_at    TIMESTAMP,
    UNIQUE (webhook_id, notification_id)
);

--bun:split

CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

--bun:split

CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, created_at);

--bun:split

-- The webhook fan-out reads the notifications of the last day.
CREATE INDEX notifications_created_idx ON notifications (created_at);
