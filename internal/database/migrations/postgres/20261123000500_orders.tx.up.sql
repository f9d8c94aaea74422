-- Package brokers/connect: the orders users place through their broker
-- connections, accepted or rejected. client_order_id is the user's
-- idempotency key (unique per user; NULL when none was given) and
-- params_hash the SHA-256 of the parameters it was first sent with.
-- broker_order_id is NULL until the broker acknowledged the order. A
-- rejected order keeps the rule that refused it and, for guardrails,
-- every broken rule as JSON (rejection). next_check_at schedules the
-- next read of a pending order's state at the broker.
CREATE TABLE broker_orders (
    id              UUID PRIMARY KEY,
    user_id         UUID NOT NULL REFERENCES users (id),
    connection_id   UUID NOT NULL REFERENCES broker_connections (id),
    asset_id        UUID NOT NULL,
    symbol          TEXT NOT NULL,
    asset_type      TEXT NOT NULL,
    side            TEXT NOT NULL,
    type            TEXT NOT NULL,
    quantity        NUMERIC(38, 18) NOT NULL,
    limit_price     NUMERIC(38, 18),
    stop_loss_price NUMERIC(38, 18),
    status          TEXT NOT NULL,
    client_order_id TEXT,
    params_hash     TEXT NOT NULL,
    broker_order_id TEXT,
    broker_status   TEXT NOT NULL DEFAULT '',
    reject_rule     TEXT NOT NULL DEFAULT '',
    reject_reason   TEXT NOT NULL DEFAULT '',
    rejection       TEXT NOT NULL DEFAULT '',
    filled_quantity NUMERIC(38, 18),
    filled_price    NUMERIC(38, 18),
    commission      NUMERIC(38, 18),
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    filled_at       TIMESTAMPTZ,
    cancelled_at    TIMESTAMPTZ,
    next_check_at   TIMESTAMPTZ,
    UNIQUE (user_id, client_order_id)
);

--bun:split

CREATE INDEX broker_orders_user_idx ON broker_orders (user_id, created_at);

--bun:split

CREATE INDEX broker_orders_pending_idx ON broker_orders (next_check_at) WHERE status = 'pending';
