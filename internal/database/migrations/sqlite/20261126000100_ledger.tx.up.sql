-- Package brokers/connect: the exposure ledger. A connection's portfolio
-- is its ledger: the cash and positions of the last sync, kept current by
-- the account's own fills between syncs (version counts the fills applied,
-- so that a sync whose snapshot raced a fill writes nothing). The
-- connection keeps when its ledger was last reconciled with the broker and
-- the differences found then (ledger_drift, '' when none). A
-- position keeps the stop-loss of the latest buy that carried one.
-- Fills are numbered per portfolio (seq, from portfolios.fill_seq) in
-- commit order, and keep the position after them where the ledger knew it.
-- An open order reserves exposure at reserved_price; ledger_qty,
-- ledger_cash and ledger_commission are how much of its fills the ledger
-- holds already.
ALTER TABLE portfolios ADD COLUMN fill_seq INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE portfolios ADD COLUMN version INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE broker_connections ADD COLUMN reconciled_at TIMESTAMP;

--bun:split

ALTER TABLE broker_connections ADD COLUMN ledger_drift TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE portfolio_positions ADD COLUMN stop_loss_price TEXT;

--bun:split

ALTER TABLE portfolio_fills ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE portfolio_fills ADD COLUMN position_after TEXT;

--bun:split

UPDATE portfolio_fills AS f SET seq = n.rn
FROM (SELECT portfolio_id, broker_id, row_number() OVER (PARTITION BY portfolio_id ORDER BY filled_at, broker_id) AS rn
      FROM portfolio_fills) AS n
WHERE f.portfolio_id = n.portfolio_id AND f.broker_id = n.broker_id;

--bun:split

UPDATE portfolios AS p SET fill_seq = (SELECT coalesce(max(seq), 0) FROM portfolio_fills WHERE portfolio_id = p.id);

--bun:split

CREATE INDEX portfolio_fills_seq_idx ON portfolio_fills (portfolio_id, seq);

--bun:split

ALTER TABLE broker_orders ADD COLUMN reserved_price TEXT;

--bun:split

ALTER TABLE broker_orders ADD COLUMN ledger_qty TEXT NOT NULL DEFAULT '0';

--bun:split

ALTER TABLE broker_orders ADD COLUMN ledger_cash TEXT NOT NULL DEFAULT '0';

--bun:split

ALTER TABLE broker_orders ADD COLUMN ledger_commission TEXT NOT NULL DEFAULT '0';

--bun:split

CREATE INDEX broker_orders_open_idx ON broker_orders (connection_id) WHERE status = 'pending';

--bun:split

-- Package copytrading: a follow's watermark (the leader portfolio's fill
-- seq taken up last) and the lease of a claimed copy.
ALTER TABLE follows ADD COLUMN copied_seq INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE copy_events ADD COLUMN lease_until TIMESTAMP;
