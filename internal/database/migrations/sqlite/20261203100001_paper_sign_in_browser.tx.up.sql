-- A sign-in link to the paper broker's account page made for a browser
-- (package brokers/paper, Broker.SignInLink) works only in that browser:
-- the SHA-256 of a cookie set on it when the link was made. NULL for the
-- links that applications ask for through the API.
ALTER TABLE paper_sign_in_links ADD COLUMN browser_hash TEXT;
