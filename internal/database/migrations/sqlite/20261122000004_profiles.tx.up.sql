-- Package profiles: the analytics profile of each asset, as built by
-- profiles.Build, with the price version (assets.prices_version) it was
-- built from, so that an incremental build redoes only the assets whose
-- prices changed since. The profile is its JSON form as TEXT; as_of is
-- the date of the last bar, TEXT YYYY-MM-DD.
CREATE TABLE profiles (
    asset_id      TEXT PRIMARY KEY REFERENCES assets (id),
    price_version INTEGER NOT NULL,
    as_of         TEXT NOT NULL,
    profile       TEXT NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);
