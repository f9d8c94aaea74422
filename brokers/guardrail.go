package brokers

import (
	"github.com/shopspring/decimal"
)

// Guardrails are a user's limits on the orders Tradekit places for them,
// checked before an order reaches the broker. A zero MaxDailyTrades,
// MaxPositionSizePct or MaxPortfolioRiskPct means no limit of that kind;
// an empty AllowedAssetTypes allows none.
type Guardrails struct {
	// MaxDailyTrades bounds the orders accepted in a UTC day.
	MaxDailyTrades int
	// MaxPositionSizePct bounds one position's value after an order, in
	// percent of equity, in (0, 100].
	MaxPositionSizePct decimal.Decimal
	// MaxPortfolioRiskPct bounds what the portfolio loses if every
	// position and the order hit their stop-loss, in percent of equity,
	// in (0, 100].
	MaxPortfolioRiskPct decimal.Decimal
	// StopLossRequired requires a buy to carry a stop-loss price below
	// its price.
	StopLossRequired bool
	// AllowedAssetTypes lists the asset types orders may trade: "stock",
	// "etf", "fx", "crypto", "commodity".
	AllowedAssetTypes []string
}

// AssetTypes returns the asset types Tradekit knows, as marketdata names
// them.
func AssetTypes() []string { return []string{"stock", "etf", "fx", "crypto", "commodity"} }

// DefaultGuardrails returns a new user's guardrails: 25 trades a day, at
// most 20 % of equity in one position, at most 10 % of equity at risk, no
// stop-loss required, every asset type allowed.
func DefaultGuardrails() Guardrails {
	return Guardrails{
		MaxDailyTrades:      25,
		MaxPositionSizePct:  decimal.New(20, 0),
		MaxPortfolioRiskPct: decimal.New(10, 0),
		AllowedAssetTypes:   AssetTypes(),
	}
}
