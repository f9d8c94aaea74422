-- Package billing: accounts and invitations. An account is the users that
-- share an account_id; a user created on their own starts an account whose
-- id is their own, as every user before this migration does. An account's
-- administrators add users to it with an invitation: a one-time token,
-- stored as its SHA-256, with which the invited user sets a password.
ALTER TABLE users ADD COLUMN account_id TEXT;

--bun:split

UPDATE users SET account_id = id;

--bun:split


CREATE INDEX users_account_id ON users (account_id);

--bun:split

CREATE TABLE invites (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX invites_user_id ON invites (user_id);
