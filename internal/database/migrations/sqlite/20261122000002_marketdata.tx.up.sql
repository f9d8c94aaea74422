-- Market data (package marketdata): exchanges, the industry tree, assets with
-- company profiles and latest fundamentals, indexes with dated constituents,
-- daily prices. Ids are name-based UUIDs (marketdata.Namespace). Prices and
-- money are decimals (TEXT: NUMERIC affinity would turn them into floats);
-- dates are TEXT YYYY-MM-DD, which sorts and compares as dates.
CREATE TABLE exchanges (
    id         TEXT PRIMARY KEY,
    symbol     TEXT NOT NULL UNIQUE,
    mic        TEXT NOT NULL,
    name       TEXT NOT NULL,
    timezone   TEXT NOT NULL,
    country    TEXT NOT NULL,
    currency   TEXT NOT NULL,
    open_time  TEXT NOT NULL,
    close_time TEXT NOT NULL
);

--bun:split

-- The rows of marketdata/calendar.Exchanges(); ids are marketdata.ExchangeID(symbol).
INSERT INTO exchanges (id, symbol, mic, name, timezone, country, currency, open_time, close_time) VALUES
    ('d30d4255-6f11-5d39-a7d1-bbef5fbe2ec8', 'NYSE', 'XNYS', 'New York Stock Exchange', 'America/New_York', 'US', 'USD', '09:30', '16:00'),
    ('3025c928-a5a1-5cef-ba8c-45c81ac9ceea', 'NASDAQ', 'XNAS', 'Nasdaq Stock Market', 'America/New_York', 'US', 'USD', '09:30', '16:00'),
    ('12fdcb1c-ba29-556c-833a-abdb17ab28a5', 'LSE', 'XLON', 'London Stock Exchange', 'Europe/London', 'GB', 'GBP', '08:00', '16:30'),
    ('d2b90e72-dc75-511c-a3c2-bf5b9f50aee8', 'XETRA', 'XETR', 'Xetra (Deutsche Börse)', 'Europe/Berlin', 'DE', 'EUR', '09:00', '17:30'),
    ('dfe773e1-8eb5-5675-b12c-a700c32176b8', 'TSX', 'XTSE', 'Toronto Stock Exchange', 'America/Toronto', 'CA', 'CAD', '09:30', '16:00'),
    ('d9e8a3b9-93bd-59e5-afa1-35f5a7025dd3', 'ASX', 'XASX', 'Australian Securities Exchange', 'Australia/Sydney', 'AU', 'AUD', '10:00', '16:10'),
    ('99802d2f-077b-5cec-a8c6-8654dc884ff4', 'JPX', 'XJPX', 'Japan Exchange Group (Tokyo Stock Exchange)', 'Asia/Tokyo', 'JP', 'JPY', '09:00', '15:30'),
    ('77e3e9e3-34ef-532f-a1ef-4d7e9715ef26', 'HKEX', 'XHKG', 'Hong Kong Exchanges and Clearing', 'Asia/Hong_Kong', 'HK', 'HKD', '09:30', '16:00'),
    ('cec90647-3447-51c1-85fe-056e983871cc', 'CRYPTO', '', 'Crypto-asset markets (24/7)', 'UTC', '', 'USD', '00:00', '24:00');

--bun:split

-- The three-level industry tree: sector > industry_group > industry.
CREATE TABLE industries (
    id        TEXT PRIMARY KEY,
    name      TEXT NOT NULL,
    level     TEXT NOT NULL CHECK (level IN ('sector', 'industry_group', 'industry')),
    parent_id TEXT REFERENCES industries (id),
    UNIQUE (level, name)
);

--bun:split

CREATE INDEX industries_parent_id_idx ON industries (parent_id);

--bun:split

-- Symbols are stored upper case (marketdata.NormalizeSymbol).
CREATE TABLE assets (
    id          TEXT PRIMARY KEY,
    symbol      TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    type        TEXT NOT NULL,
    exchange_id TEXT NOT NULL REFERENCES exchanges (id),
    currency    TEXT NOT NULL,
    is_active   BOOLEAN NOT NULL DEFAULT 1,
    industry_id TEXT REFERENCES industries (id)
);

--bun:split

CREATE INDEX assets_industry_id_idx ON assets (industry_id);

--bun:split

CREATE TABLE asset_profiles (
    asset_id    TEXT PRIMARY KEY REFERENCES assets (id),
    description TEXT NOT NULL,
    sector      TEXT NOT NULL,
    industry    TEXT NOT NULL,
    market_cap  TEXT NOT NULL,
    website     TEXT NOT NULL,
    logo_url    TEXT NOT NULL
);

--bun:split

-- The latest fundamentals of an asset: one row, replaced on update.
CREATE TABLE asset_fundamentals (
    asset_id       TEXT PRIMARY KEY REFERENCES assets (id),
    pe_ratio       TEXT NOT NULL,
    eps            TEXT NOT NULL,
    revenue        TEXT NOT NULL,
    market_cap     TEXT NOT NULL,
    dividend_yield TEXT NOT NULL,
    beta           TEXT NOT NULL,
    updated_at     TIMESTAMP NOT NULL
);

--bun:split

CREATE TABLE market_indexes (
    id          TEXT PRIMARY KEY,
    symbol      TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL
);

--bun:split

-- Membership periods: an asset is a constituent on the days d with
-- valid_from <= d and (valid_to IS NULL OR d < valid_to).
CREATE TABLE index_constituents (
    index_id   TEXT NOT NULL REFERENCES market_indexes (id),
    asset_id   TEXT NOT NULL REFERENCES assets (id),
    valid_from TEXT NOT NULL,
    valid_to   TEXT,
    PRIMARY KEY (index_id, asset_id, valid_from),
    CHECK (valid_to IS NULL OR valid_to > valid_from)
);

--bun:split

CREATE INDEX index_constituents_asset_id_idx ON index_constituents (asset_id);

--bun:split

-- Daily OHLCV, one row per asset and date. A record's id is not stored:
-- it encodes the asset and the date (marketdata.PriceID).
CREATE TABLE prices (
    asset_id TEXT NOT NULL REFERENCES assets (id),
    date     TEXT NOT NULL,
    open     TEXT NOT NULL,
    high     TEXT NOT NULL,
    low      TEXT NOT NULL,
    close    TEXT NOT NULL,
    volume   BIGINT NOT NULL,
    PRIMARY KEY (asset_id, date)
) WITHOUT ROWID;
