-- The paper broker's stop-limit and trailing-stop orders (package
-- brokers/paper): whether a stop-limit order's stop has been reached, and
-- a trailing stop's trail and high-water mark (its low-water mark for a
-- buy).
ALTER TABLE paper_orders ADD COLUMN triggered BOOLEAN NOT NULL DEFAULT FALSE;

--bun:split

ALTER TABLE paper_orders ADD COLUMN trail_price NUMERIC(38, 18);

--bun:split

ALTER TABLE paper_orders ADD COLUMN trail_percent NUMERIC(38, 18);

--bun:split

ALTER TABLE paper_orders ADD COLUMN hwm NUMERIC(38, 18);
