-- Package billing: a user's password for the account dashboard, as the
-- Argon2id hash billing.HashPassword writes (PHC string format); NULL for
-- a user who has none and signs in nowhere.
ALTER TABLE users ADD COLUMN password_hash TEXT;
