-- The paper broker's rate limit (package brokers/paper): the requests an
-- account made to the API in the current UTC minute (window_start, Unix
-- seconds). One row per account, reset when a new minute starts, so
-- nothing accumulates.
CREATE TABLE paper_request_counts (
    account_id   UUID PRIMARY KEY,
    window_start BIGINT NOT NULL,
    count        INTEGER NOT NULL
);
