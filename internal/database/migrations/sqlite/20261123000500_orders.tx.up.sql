-- Package brokers/connect: the orders users place through their broker
-- connections, accepted or rejected. client_order_id is the user's
-- idempotency key (unique per user; NULL when none was given) and
-- params_hash the SHA-256 of the parameters it was first sent with.
-- broker_order_id is NULL until the broker acknowledged the order. A
-- rejected order keeps the rule that refused it and, for guardrails,
-- every broken rule as JSON (rejection). next_check_at schedules the
-- next read of a pending order's state at the broker.
CREATE TABLE broker_orders (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users (id),
    connection_id   TEXT NOT NULL REFERENCES broker_connections (id),
    asset_id        TEXT NOT NULL,
    symbol          TEXT NOT NULL,
    asset_type      TEXT NOT NULL,
    side            TEXT NOT NULL,
    type            TEXT NOT NULL,
    quantity        TEXT NOT NULL,
    limit_price     TEXT,
    stop_loss_price TEXT,
    status          TEXT NOT NULL,
    client_order_id TEXT,
    params_hash     TEXT NOT NULL,
    broker_order_id TEXT,
    broker_status   TEXT NOT NULL DEFAULT '',
    reject_rule     TEXT NOT NULL DEFAULT '',
    reject_reason   TEXT NOT NULL DEFAULT '',
    rejection       TEXT NOT NULL DEFAULT '',
    filled_quantity TEXT,
    filled_price    TEXT,
    commission      TEXT,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    filled_at       TIMESTAMP,
    cancelled_at    TIMESTAMP,
    next_check_at   TIMESTAMP,
    UNIQUE (user_id, client_order_id)
);

--bun:split

CREATE INDEX broker_orders_user_idx ON broker_orders (user_id, created_at);

--bun:split

CREATE INDEX broker_orders_pending_idx ON broker_orders (next_check_at) WHERE status = 'pending';
