-- A placement at the paper broker reads the account's open orders on its
-- side (and, for a sell, of its symbol) to check what it can afford. The
-- stop-loss legs of filled OTO and bracket orders rest open, one per
-- buy, so an index by account alone makes each placement read them all.
CREATE INDEX paper_orders_open_side_idx ON paper_orders (account_id, side, symbol) WHERE status = 'new';
