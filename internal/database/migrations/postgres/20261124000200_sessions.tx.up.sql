-- Package billing: dashboard sessions, by the SHA-256 of the cookie's
-- token (the token itself is never stored), with the form token that
-- guards every POST of the session (CSRF); and failed sign-ins, counted
-- per email for the throttle.
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id    UUID NOT NULL REFERENCES users (id),
    csrf_token TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_user_id ON sessions (user_id);

CREATE TABLE sign_in_failures (
    email     TEXT NOT NULL,
    failed_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX sign_in_failures_email ON sign_in_failures (email, failed_at);
