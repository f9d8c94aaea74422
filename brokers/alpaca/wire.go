package alpaca

import (
	"time"

	"github.com/shopspring/decimal"
)

// The JSON bodies of Alpaca's Trading API v2, with Alpaca's field names.
// Decimals travel as JSON strings ("100000.5"), as Alpaca sends them:
// decimal.Decimal's default encoding, which this package never changes.
// Only the fields Tradekit reads or the paper broker writes are here; a
// decoder ignores the others. The same types are the paper broker's
// encoders, so the two sides cannot drift apart.

// AccountJSON is the body of GET /v2/account.
type AccountJSON struct {
	ID                  string          `json:"id"`
	AccountNumber       string          `json:"account_number"`
	Status              string          `json:"status"`
	Currency            string          `json:"currency"`
	Cash                decimal.Decimal `json:"cash"`
	BuyingPower         decimal.Decimal `json:"buying_power"`
	PortfolioValue      decimal.Decimal `json:"portfolio_value"`
	Equity              decimal.Decimal `json:"equity"`
	LastEquity          decimal.Decimal `json:"last_equity"`
	LongMarketValue     decimal.Decimal `json:"long_market_value"`
	ShortMarketValue    decimal.Decimal `json:"short_market_value"`
	PositionMarketValue decimal.Decimal `json:"position_market_value"`
	PatternDayTrader    bool            `json:"pattern_day_trader"`
	TradingBlocked      bool            `json:"trading_blocked"`
	AccountBlocked      bool            `json:"account_blocked"`
	CreatedAt           time.Time       `json:"created_at"`
}

// PositionJSON is an element of GET /v2/positions.
type PositionJSON struct {
	AssetID       string           `json:"asset_id"`
	Symbol        string           `json:"symbol"`
	Exchange      string           `json:"exchange"`
	AssetClass    string           `json:"asset_class"` // "us_equity", "crypto"
	Qty           decimal.Decimal  `json:"qty"`
	AvgEntryPrice decimal.Decimal  `json:"avg_entry_price"`
	Side          string           `json:"side"` // "long", "short"
	MarketValue   *decimal.Decimal `json:"market_value"`
	CostBasis     decimal.Decimal  `json:"cost_basis"`
	UnrealizedPL  *decimal.Decimal `json:"unrealized_pl"`
	CurrentPrice  *decimal.Decimal `json:"current_price"`
	LastdayPrice  *decimal.Decimal `json:"lastday_price"`
}

// OrderJSON is an element of GET /v2/orders and the body of an order.
type OrderJSON struct {
	ID             string           `json:"id"`
	ClientOrderID  string           `json:"client_order_id"`
	CreatedAt      time.Time        `json:"created_at"`
	UpdatedAt      time.Time        `json:"updated_at"`
	SubmittedAt    time.Time        `json:"submitted_at"`
	FilledAt       *time.Time       `json:"filled_at"`
	CanceledAt     *time.Time       `json:"canceled_at"`
	ExpiredAt      *time.Time       `json:"expired_at"`
	FailedAt       *time.Time       `json:"failed_at"`
	AssetID        string           `json:"asset_id"`
	Symbol         string           `json:"symbol"`
	AssetClass     string           `json:"asset_class"`
	Type           string           `json:"type"`          // "market", "limit", …
	Side           string           `json:"side"`          // "buy", "sell"
	TimeInForce    string           `json:"time_in_force"` // "day", "gtc", …
	Status         string           `json:"status"`        // "new", "filled", "canceled", "rejected", …
	Qty            *decimal.Decimal `json:"qty"`
	FilledQty      decimal.Decimal  `json:"filled_qty"`
	FilledAvgPrice *decimal.Decimal `json:"filled_avg_price"`
	LimitPrice     *decimal.Decimal `json:"limit_price"`
	StopPrice      *decimal.Decimal `json:"stop_price"`
	// Commission is what the fills cost. Alpaca's Broker API reports it on
	// orders and its Trading API leaves it out (commission-free trading):
	// then it is nil, read as zero. The paper broker fills it in.
	Commission *decimal.Decimal `json:"commission,omitempty"`
}

// OrderRequestJSON is the body of POST /v2/orders, as far as Tradekit
// sends it: simple market and limit orders.
type OrderRequestJSON struct {
	Symbol        string           `json:"symbol"`
	Qty           decimal.Decimal  `json:"qty"`
	Side          string           `json:"side"`          // "buy", "sell"
	Type          string           `json:"type"`          // "market", "limit"
	TimeInForce   string           `json:"time_in_force"` // "day", "gtc"
	LimitPrice    *decimal.Decimal `json:"limit_price,omitempty"`
	ClientOrderID string           `json:"client_order_id,omitempty"`
}

// PortfolioHistoryJSON is the body of GET /v2/account/portfolio/history:
// parallel arrays, one element per bar, timestamps in Unix seconds.
// Alpaca sends these decimals as JSON numbers, not strings; decimal.Decimal
// decodes either form exactly from its text.
type PortfolioHistoryJSON struct {
	Timestamp     []int64            `json:"timestamp"`
	Equity        []*decimal.Decimal `json:"equity"` // null where the account did not exist yet
	ProfitLoss    []*decimal.Decimal `json:"profit_loss"`
	ProfitLossPct []*decimal.Decimal `json:"profit_loss_pct"`
	BaseValue     decimal.Decimal    `json:"base_value"`
	Timeframe     string             `json:"timeframe"` // "1D"
	// Cashflow holds, by activity type (CSD deposits, CSW withdrawals,
	// JNLC cash journals), one amount per bar, signed as it moved the
	// cash, when the request names cashflow_types.
	Cashflow map[string][]*decimal.Decimal `json:"cashflow,omitempty"`
}

// ErrorJSON is the body of an error answer: {"code": 40110000,
// "message": "request is not authorized"}.
type ErrorJSON struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}
