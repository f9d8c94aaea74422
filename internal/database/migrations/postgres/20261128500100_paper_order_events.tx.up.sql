-- The trade-update stream of the paper broker (GET /v2/events/trades)
-- reads, several times a second while a client listens, the orders of an
-- account updated since its latest event.
CREATE INDEX paper_orders_updated_idx ON paper_orders (account_id, updated_at);
