-- Package billing: rate limits are counted per account, which the members
-- of an account share (CONTRACT, additions of 2026-11-29), so the counters
-- are keyed by the account's id. Until now every user had counters of
-- their own: a user created alone has the account id of their own id and
-- keeps their counts; an invited member's counts stay under an id no
-- account has and go with the next pruning (48 hours).
ALTER TABLE rate_counters RENAME COLUMN user_id TO account_id;
