-- Corporate actions of an asset (package marketdata, Store.SaveActions):
-- splits (value: the ratio, 4 for a 4-for-1 split) and cash dividends
-- (value: the amount per share, in the asset's currency), by ex-date.
-- Prices stay as traded; adjusted series are computed from these rows on
-- read (marketdata.Adjust).
CREATE TABLE corporate_actions (
    asset_id UUID NOT NULL REFERENCES assets (id),
    date     DATE NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('split', 'dividend')),
    value    NUMERIC(38, 18) NOT NULL,
    PRIMARY KEY (asset_id, kind, date)
);
