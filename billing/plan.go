package billing

import (
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// FreePlan is the slug of the plan new users get by default.
const FreePlan = "free"

// Plan is a subscription plan with its price and feature limits.
type Plan struct {
	ID       uuid.UUID       `bun:"id,pk"`
	Slug     string          `bun:"slug"`
	Name     string          `bun:"name"`
	Price    decimal.Decimal `bun:"price"`
	Currency string          `bun:"currency"`
	Interval string          `bun:"interval"`
	Features Features        `bun:"embed:"`
	// SortOrder orders plans from the cheapest up.
	SortOrder int `bun:"sort_order"`
}

// Features are a plan's limits.
type Features struct {
	APIRequestsPerDay    int `bun:"api_requests_per_day"`
	APIRequestsPerMinute int `bun:"api_requests_per_minute"`
	Watchlists           int `bun:"watchlists"`
	Portfolios           int `bun:"portfolios"`
	Alerts               int `bun:"alerts"`
	// FormulaCost is the largest static cost (formula.Expr.Cost) of a
	// formula the plan's users may give to an alert, a custom indicator or
	// a backtest; 0 allows any.
	FormulaCost int `bun:"formula_cost"`
	// Backtests is how many strategies' backtest results an account
	// keeps (one per member and strategy hash); a rerun of a kept
	// strategy replaces its result.
	Backtests int `bun:"backtests"`
	// BacktestRuns is how many backtests an account runs at once.
	BacktestRuns int `bun:"backtest_runs"`
}

// Limits returns the rate limits of the plan.
func (p Plan) Limits() Limits {
	return Limits{PerMinute: p.Features.APIRequestsPerMinute, PerDay: p.Features.APIRequestsPerDay}
}
