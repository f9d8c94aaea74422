-- Package studies: the price version that invalidates cached indicator
-- series (bumped by marketdata.Store.SavePrices), and users' custom
-- indicators, kept with deleted_at when deleted.
ALTER TABLE assets ADD COLUMN prices_version INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE assets ADD COLUMN prices_updated_at TIMESTAMP;

--bun:split

CREATE TABLE custom_indicators (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id),
    name        TEXT NOT NULL,
    formula     TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL,
    deleted_at  TIMESTAMP
);

--bun:split

CREATE INDEX custom_indicators_user_idx ON custom_indicators (user_id, created_at) WHERE deleted_at IS NULL;
