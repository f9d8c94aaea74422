-- A webhook's health as a receiver: failures counts its consecutive
-- failed attempts, failing_since is when the first of them was made
-- (NULL while it answers), paused_until is when the next attempt to it
-- may start (exponential backoff across all its deliveries), and
-- disabled_at is when it was disabled after failing for days. Deliveries
-- to a disabled webhook are cancelled.
ALTER TABLE webhooks ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE webhooks ADD COLUMN failing_since TIMESTAMPTZ;

--bun:split

ALTER TABLE webhooks ADD COLUMN paused_until TIMESTAMPTZ;

--bun:split

ALTER TABLE webhooks ADD COLUMN disabled_at TIMESTAMPTZ;

--bun:split

-- The claim counts the deliveries in flight (pending, leased) per webhook
-- and per account.
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (lease_until, webhook_id) WHERE status = 'pending' AND lease_until IS NOT NULL;

--bun:split

-- Deliveries still pending to disabled webhooks are cancelled each pass.
CREATE INDEX webhooks_disabled_idx ON webhooks (id) WHERE disabled_at IS NOT NULL;
