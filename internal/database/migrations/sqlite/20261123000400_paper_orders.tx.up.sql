-- The paper broker takes orders (package brokers/paper): a limit order's
-- price and what a fill cost in commission. Open orders (status "new")
-- are what the matching engine reads on every pass.
ALTER TABLE paper_orders ADD COLUMN limit_price TEXT;

--bun:split

ALTER TABLE paper_orders ADD COLUMN commission TEXT;

--bun:split

CREATE INDEX paper_orders_open_idx ON paper_orders (account_id, seq) WHERE status = 'new';
