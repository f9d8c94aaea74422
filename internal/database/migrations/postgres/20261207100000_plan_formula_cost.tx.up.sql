-- Plan feature formula_cost: the largest static cost (see package
-- indicators/formula, Expr.Cost) of a formula the plan's users may give to
-- an alert, a custom indicator or a backtest. 0 allows any cost.
ALTER TABLE plans ADD COLUMN formula_cost INTEGER NOT NULL DEFAULT 0;

--bun:split

UPDATE plans SET formula_cost = 2000 WHERE slug = 'free';

--bun:split

UPDATE plans SET formula_cost = 50000 WHERE slug = 'pro';

--bun:split

UPDATE plans SET formula_cost = 200000 WHERE slug = 'business';
