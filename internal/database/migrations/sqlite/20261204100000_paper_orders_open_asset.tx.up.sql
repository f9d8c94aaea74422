-- The matcher's regular pass visits only the open orders that may have
-- changed: those of the assets whose price version moved (the distinct
-- assets with open orders are read by a loose index scan of the first
-- index, and their orders in the order they were placed), those opened
-- or changed lately (the second), and, when the clock passes an open or
-- a close, the opg and cls orders (the third).
CREATE INDEX paper_orders_open_asset_idx ON paper_orders (asset_id, submitted_at, seq, id) WHERE status = 'new';
CREATE INDEX paper_orders_open_updated_idx ON paper_orders (updated_at) WHERE status = 'new';
CREATE INDEX paper_orders_open_auction_idx ON paper_orders (submitted_at) WHERE status = 'new' AND time_in_force IN ('opg', 'cls');
