-- Package brokers/connect: each user's trade guardrails, once they set
-- any (until then the defaults of brokers.DefaultGuardrails apply).
-- allowed_asset_types is a comma-separated list.
CREATE TABLE broker_guardrails (
    user_id                TEXT PRIMARY KEY REFERENCES users (id),
    max_daily_trades       INTEGER NOT NULL,
    max_position_size_pct  TEXT NOT NULL,
    max_portfolio_risk_pct TEXT NOT NULL,
    stop_loss_required     BOOLEAN NOT NULL,
    allowed_asset_types    TEXT NOT NULL,
    updated_at             TIMESTAMP NOT NULL
);
