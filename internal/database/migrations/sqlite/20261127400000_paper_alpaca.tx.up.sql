-- The paper broker as an Alpaca sandbox (package brokers/paper): notional,
-- stop and extended-hours orders, order classes with their legs
-- (parent_id), replaced orders, and the OAuth clients registered with
-- `tradekit paper apps create` (their secrets as hex SHA-256 only).
ALTER TABLE paper_orders ADD COLUMN notional TEXT;

--bun:split

ALTER TABLE paper_orders ADD COLUMN stop_price TEXT;

--bun:split

ALTER TABLE paper_orders ADD COLUMN extended_hours BOOLEAN NOT NULL DEFAULT FALSE;

--bun:split

ALTER TABLE paper_orders ADD COLUMN order_class TEXT NOT NULL DEFAULT 'simple';

--bun:split

ALTER TABLE paper_orders ADD COLUMN parent_id TEXT;

--bun:split

ALTER TABLE paper_orders ADD COLUMN replaces TEXT;

--bun:split

ALTER TABLE paper_orders ADD COLUMN replaced_by TEXT;

--bun:split

ALTER TABLE paper_orders ADD COLUMN replaced_at TIMESTAMP;

--bun:split

CREATE INDEX paper_orders_parent_idx ON paper_orders (parent_id) WHERE parent_id IS NOT NULL;

--bun:split

CREATE TABLE paper_apps (
    client_id     TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    secret_hash   TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    created_at    TIMESTAMP NOT NULL
);
