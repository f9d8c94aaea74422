-- The paper broker's consent form (package brokers/paper). The form's
-- CSRF token is signed by the server, so nothing is stored when the page
-- is shown; the token's nonce is recorded here when the form is
-- submitted, so that a token works once. Rows past expires_at (the
-- token's own expiry) are deleted.
CREATE TABLE paper_consent_nonces (
    nonce      TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);

--bun:split

CREATE INDEX paper_consent_nonces_expires_idx ON paper_consent_nonces (expires_at);

--bun:split

-- Paper accounts opened per client address (an IP address, or an IPv6
-- /64) in each UTC hour (window_start, Unix seconds), which bounds how
-- many one address may open. Past windows are deleted.
CREATE TABLE paper_signups (
    address      TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (address, window_start)
);

--bun:split

CREATE INDEX paper_signups_window_idx ON paper_signups (window_start);
