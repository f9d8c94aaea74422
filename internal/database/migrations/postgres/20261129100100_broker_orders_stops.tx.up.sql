-- Each sync of a connection reads the stop-loss price of the latest
-- filled buy per symbol (connect's Store.stops); without an index that
-- read went through every order of every user.
CREATE INDEX broker_orders_stops_idx ON broker_orders (connection_id, filled_at)
    WHERE status = 'filled' AND side = 'buy' AND stop_loss_price IS NOT NULL;
