-- alerts.adjusted: true evaluates the alert's condition over prices
-- back-adjusted for splits and dividends (marketdata.Adjust), the series
-- the charts and adjusted=true indicator routes show; false over prices as
-- traded. Existing alerts move to adjusted prices: a split no longer looks
-- like a crash to them. Only bars after an alert's watermark are evaluated,
-- so the change fires nothing on old bars.
ALTER TABLE alerts ADD COLUMN adjusted BOOLEAN NOT NULL DEFAULT TRUE;
