-- The evaluation watermark of each asset's alerts (package alerts): the
-- asset's price version and the date of the last bar its active alerts
-- were evaluated on. An evaluation pass claims an asset by moving this
-- row from the version it read to the new one, in the transaction that
-- records the firings; a concurrent pass that read the same version
-- loses and records nothing. An alert's own checked_version and
-- checked_through are where it started (or last fired); it is evaluated
-- on the bars after the later of the two watermarks. Alerts that do not
-- fire are not written at all.
CREATE TABLE alert_watermarks (
    asset_id TEXT PRIMARY KEY REFERENCES assets (id),
    version  INTEGER NOT NULL,
    through  TEXT NOT NULL
);
