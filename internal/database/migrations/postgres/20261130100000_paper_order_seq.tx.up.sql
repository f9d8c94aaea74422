-- An account numbers its orders from a counter on its row: the statement
-- that locks the account for a placement takes the numbers of the order
-- and its legs, which are then written in one INSERT. Numbering each row
-- as max(seq) + 1 needed one INSERT per row.
ALTER TABLE paper_accounts ADD COLUMN order_seq BIGINT NOT NULL DEFAULT 0;
UPDATE paper_accounts SET order_seq = coalesce((SELECT max(seq) FROM paper_orders WHERE paper_orders.account_id = paper_accounts.id), 0);
