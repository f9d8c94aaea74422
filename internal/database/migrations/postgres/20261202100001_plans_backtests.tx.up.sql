-- Package billing: the plan features backtests (the strategies whose
-- results an account keeps) and backtest_runs (the backtests an account
-- runs at once). A plan added by hand gets the free plan's.
ALTER TABLE plans ADD COLUMN backtests INTEGER NOT NULL DEFAULT 10;

--bun:split

ALTER TABLE plans ADD COLUMN backtest_runs INTEGER NOT NULL DEFAULT 1;

--bun:split

UPDATE plans SET backtests = 10, backtest_runs = 1 WHERE slug = 'free';

--bun:split

UPDATE plans SET backtests = 100, backtest_runs = 2 WHERE slug = 'pro';

--bun:split

UPDATE plans SET backtests = 1000, backtest_runs = 4 WHERE slug = 'business';
