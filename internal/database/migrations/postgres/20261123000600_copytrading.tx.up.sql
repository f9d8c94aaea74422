-- Package copytrading: leader profiles (a published portfolio, its
-- statistics cached from the portfolio's history), follows with their
-- copy controls, notifications, and published strategies. A profile, a
-- follow or a strategy is never deleted: unpublishing or unfollowing
-- stamps it, and the partial unique indexes hold among the live ones.
-- portfolio_equity gains the day's net external cash flow (deposits
-- positive, withdrawals negative), so that returns exclude it.
ALTER TABLE portfolio_equity ADD COLUMN flow NUMERIC(38, 18) NOT NULL DEFAULT 0;

--bun:split

CREATE TABLE leader_profiles (
    id              UUID PRIMARY KEY,
    user_id         UUID NOT NULL REFERENCES users (id),
    portfolio_id    UUID NOT NULL REFERENCES portfolios (id),
    slug            TEXT NOT NULL,
    display_name    TEXT NOT NULL,
    bio             TEXT NOT NULL DEFAULT '',
    published_at    TIMESTAMPTZ NOT NULL,
    unpublished_at  TIMESTAMPTZ,
    total_return    DOUBLE PRECISION NOT NULL DEFAULT 0,
    sharpe_ratio    DOUBLE PRECISION NOT NULL DEFAULT 0,
    max_drawdown    DOUBLE PRECISION NOT NULL DEFAULT 0,
    monthly_returns TEXT NOT NULL DEFAULT '[]',
    stats_at        TIMESTAMPTZ
);

--bun:split

CREATE UNIQUE INDEX leader_profiles_slug_idx ON leader_profiles (slug) WHERE unpublished_at IS NULL;

--bun:split

CREATE UNIQUE INDEX leader_profiles_user_idx ON leader_profiles (user_id) WHERE unpublished_at IS NULL;

--bun:split

CREATE TABLE follows (
    id                 UUID PRIMARY KEY,
    user_id            UUID NOT NULL REFERENCES users (id),
    leader_profile_id  UUID NOT NULL REFERENCES leader_profiles (id),
    auto_sync          BOOLEAN NOT NULL,
    notifications      BOOLEAN NOT NULL,
    connection_id      UUID REFERENCES broker_connections (id),
    allocation_pct     NUMERIC(38, 18) NOT NULL,
    scaling_pct        NUMERIC(38, 18) NOT NULL,
    max_position_pct   NUMERIC(38, 18) NOT NULL,
    copy_stop_loss_pct NUMERIC(38, 18) NOT NULL,
    followed_at        TIMESTAMPTZ NOT NULL,
    copy_since         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    unfollowed_at      TIMESTAMPTZ,
    stopped_reason     TEXT NOT NULL DEFAULT ''
);

--bun:split

CREATE UNIQUE INDEX follows_live_idx ON follows (user_id, leader_profile_id) WHERE unfollowed_at IS NULL;

--bun:split

CREATE INDEX follows_leader_idx ON follows (leader_profile_id) WHERE unfollowed_at IS NULL;

--bun:split

-- One row per (follow, leader fill) the copy engine took up: claimed
-- first, so that one instance handles it, then placed (order_id),
-- rejected, skipped (nothing to copy) or notified (no auto-sync).
CREATE TABLE copy_events (
    follow_id  UUID NOT NULL REFERENCES follows (id),
    fill_id    TEXT NOT NULL,
    status     TEXT NOT NULL,
    order_id   UUID,
    reason     TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (follow_id, fill_id)
);

--bun:split

CREATE TABLE notifications (
    id         UUID PRIMARY KEY,
    user_id    UUID NOT NULL REFERENCES users (id),
    kind       TEXT NOT NULL,
    message    TEXT NOT NULL,
    data       TEXT NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    read_at    TIMESTAMPTZ
);

--bun:split

CREATE INDEX notifications_user_idx ON notifications (user_id, created_at);

--bun:split

CREATE TABLE published_strategies (
    id             UUID PRIMARY KEY,
    user_id        UUID NOT NULL REFERENCES users (id),
    strategy_hash  TEXT NOT NULL,
    name           TEXT NOT NULL,
    description    TEXT NOT NULL DEFAULT '',
    published_at   TIMESTAMPTZ NOT NULL,
    unpublished_at TIMESTAMPTZ
);

--bun:split

CREATE UNIQUE INDEX published_strategies_live_idx ON published_strategies (user_id, strategy_hash) WHERE unpublished_at IS NULL;
