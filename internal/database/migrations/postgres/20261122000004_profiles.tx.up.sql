-- Package profiles: the analytics profile of each asset, as built by
-- profiles.Build, with the price version (assets.prices_version) it was
-- built from, so that an incremental build redoes only the assets whose
-- prices changed since. The profile is its JSON form, stored as TEXT
-- rather than JSONB: nothing queries inside it, and JSONB would reorder
-- its keys and reformat its numbers, so the API would no longer serve
-- the bytes the engine wrote (TEXT is also what SQLite stores).
CREATE TABLE profiles (
    asset_id      UUID PRIMARY KEY REFERENCES assets (id),
    price_version BIGINT NOT NULL,
    as_of         DATE NOT NULL,
    profile       TEXT NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
