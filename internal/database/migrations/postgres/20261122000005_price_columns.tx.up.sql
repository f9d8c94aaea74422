-- A derived copy of each asset's prices as float64 columns (package
-- marketdata, Store.PriceColumns): analytics read an asset's whole history
-- at once, and a few values read far faster than thousands of rows. The
-- encoding is cut into chunks that fit in one 4 KiB SQLite page, so reading
-- them needs no overflow pages and no allocation inside SQLite. version is the
-- assets.prices_version it was built from; a stale copy is rebuilt from
-- prices on the next read. prices stays the record.
CREATE TABLE price_columns (
    asset_id UUID NOT NULL REFERENCES assets (id),
    chunk    INTEGER NOT NULL,
    version  BIGINT NOT NULL,
    data     BYTEA NOT NULL,
    PRIMARY KEY (asset_id, chunk)
);
