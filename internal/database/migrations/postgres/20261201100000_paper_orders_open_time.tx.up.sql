-- The matcher's regular pass reads every open order, a batch at a time,
-- in the order they were placed; each batch starts after the last one's
-- (submitted_at, seq, id).
CREATE INDEX paper_orders_open_time_idx ON paper_orders (submitted_at, seq, id) WHERE status = 'new';
