-- Package billing: failed sign-ins are counted per (email, client address)
-- pair, which the lockout is per, and per address, so that failures from
-- one address never lock an email out at another. Failures recorded
-- before have no address ('').
ALTER TABLE sign_in_failures ADD COLUMN address TEXT NOT NULL DEFAULT '';
DROP INDEX sign_in_failures_email;
CREATE INDEX sign_in_failures_email_address ON sign_in_failures (email, address, failed_at);
CREATE INDEX sign_in_failures_address ON sign_in_failures (address, failed_at);
