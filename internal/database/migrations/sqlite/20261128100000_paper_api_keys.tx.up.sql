-- Alpaca-style API keys of paper accounts (package brokers/paper): a key
-- id sent as APCA-API-KEY-ID and a secret sent as APCA-API-SECRET-KEY,
-- created and revoked on the broker's account page. The page's sign-in
-- links and sessions are here too. Secrets, links and session tokens are
-- stored only as the hex SHA-256 of their text; a revoked key keeps its
-- row with revoked_at set.
-- SQLite: UUIDs are TEXT.
CREATE TABLE paper_api_keys (
    key_id      TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES paper_accounts (id),
    name        TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    created_at  TIMESTAMP NOT NULL,
    revoked_at  TIMESTAMP
);

--bun:split

CREATE INDEX paper_api_keys_account_idx ON paper_api_keys (account_id);

--bun:split

-- A single-use link that signs a browser in to its account's page; an
-- OAuth client asks for it with the account's access token.
CREATE TABLE paper_sign_in_links (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES paper_accounts (id),
    expires_at TIMESTAMP NOT NULL
);

--bun:split

CREATE TABLE paper_sessions (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES paper_accounts (id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
