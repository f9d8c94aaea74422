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

// AccountJSON is the body of GET /v2/account, with every field of
// Alpaca's account model. The paper broker fills in each one; see the
// package doc for how it simulates them.
type AccountJSON struct {
	ID                       string          `json:"id"`
	AccountNumber            string          `json:"account_number"`
	Status                   string          `json:"status"`
	CryptoStatus             string          `json:"crypto_status"`
	Currency                 string          `json:"currency"`
	Cash                     decimal.Decimal `json:"cash"`
	BuyingPower              decimal.Decimal `json:"buying_power"`
	RegTBuyingPower          decimal.Decimal `json:"regt_buying_power"`
	DaytradingBuyingPower    decimal.Decimal `json:"daytrading_buying_power"`
	EffectiveBuyingPower     decimal.Decimal `json:"effective_buying_power"`
	NonMarginableBuyingPower decimal.Decimal `json:"non_marginable_buying_power"`
	OptionsBuyingPower       decimal.Decimal `json:"options_buying_power"`
	BodDtbp                  decimal.Decimal `json:"bod_dtbp"`
	AccruedFees              decimal.Decimal `json:"accrued_fees"`
	PendingTransferIn        decimal.Decimal `json:"pending_transfer_in"`
	PortfolioValue           decimal.Decimal `json:"portfolio_value"`
	Equity                   decimal.Decimal `json:"equity"`
	LastEquity               decimal.Decimal `json:"last_equity"`
	LongMarketValue          decimal.Decimal `json:"long_market_value"`
	ShortMarketValue         decimal.Decimal `json:"short_market_value"`
	PositionMarketValue      decimal.Decimal `json:"position_market_value"`
	Multiplier               decimal.Decimal `json:"multiplier"`
	InitialMargin            decimal.Decimal `json:"initial_margin"`
	MaintenanceMargin        decimal.Decimal `json:"maintenance_margin"`
	LastMaintenanceMargin    decimal.Decimal `json:"last_maintenance_margin"`
	SMA                      decimal.Decimal `json:"sma"`
	DaytradeCount            int64           `json:"daytrade_count"`
	CryptoTier               int             `json:"crypto_tier"`
	OptionsApprovedLevel     int             `json:"options_approved_level"`
	OptionsTradingLevel      int             `json:"options_trading_level"`
	PatternDayTrader         bool            `json:"pattern_day_trader"`
	TradingBlocked           bool            `json:"trading_blocked"`
	TransfersBlocked         bool            `json:"transfers_blocked"`
	AccountBlocked           bool            `json:"account_blocked"`
	ShortingEnabled          bool            `json:"shorting_enabled"`
	TradeSuspendedByUser     bool            `json:"trade_suspended_by_user"`
	CreatedAt                time.Time       `json:"created_at"`
	BalanceAsOf              string          `json:"balance_asof"` // YYYY-MM-DD
}

// PositionJSON is an element of GET /v2/positions and the body of GET
// /v2/positions/{symbol}, with every field of Alpaca's position model.
type PositionJSON struct {
	AssetID                string           `json:"asset_id"`
	Symbol                 string           `json:"symbol"`
	Exchange               string           `json:"exchange"`
	AssetClass             string           `json:"asset_class"` // "us_equity", "crypto"
	AssetMarginable        bool             `json:"asset_marginable"`
	Qty                    decimal.Decimal  `json:"qty"`
	QtyAvailable           decimal.Decimal  `json:"qty_available"`
	AvgEntryPrice          decimal.Decimal  `json:"avg_entry_price"`
	Side                   string           `json:"side"` // "long", "short"
	MarketValue            *decimal.Decimal `json:"market_value"`
	CostBasis              decimal.Decimal  `json:"cost_basis"`
	UnrealizedPL           *decimal.Decimal `json:"unrealized_pl"`
	UnrealizedPLPC         *decimal.Decimal `json:"unrealized_plpc"`
	UnrealizedIntradayPL   *decimal.Decimal `json:"unrealized_intraday_pl"`
	UnrealizedIntradayPLPC *decimal.Decimal `json:"unrealized_intraday_plpc"`
	CurrentPrice           *decimal.Decimal `json:"current_price"`
	LastdayPrice           *decimal.Decimal `json:"lastday_price"`
	ChangeToday            *decimal.Decimal `json:"change_today"`
}

// OrderJSON is an element of GET /v2/orders and the body of an order,
// with every field of Alpaca's order model. Legs holds the child orders
// of a bracket, OTO or OCO order; nil otherwise.
type OrderJSON struct {
	ID             string           `json:"id"`
	ClientOrderID  string           `json:"client_order_id"`
	CreatedAt      time.Time        `json:"created_at"`
	UpdatedAt      time.Time        `json:"updated_at"`
	SubmittedAt    time.Time        `json:"submitted_at"`
	FilledAt       *time.Time       `json:"filled_at"`
	ExpiredAt      *time.Time       `json:"expired_at"`
	ExpiresAt      *time.Time       `json:"expires_at"`
	CanceledAt     *time.Time       `json:"canceled_at"`
	FailedAt       *time.Time       `json:"failed_at"`
	ReplacedAt     *time.Time       `json:"replaced_at"`
	ReplacedBy     *string          `json:"replaced_by"`
	Replaces       *string          `json:"replaces"`
	AssetID        string           `json:"asset_id"`
	Symbol         string           `json:"symbol"`
	AssetClass     string           `json:"asset_class"`
	OrderClass     string           `json:"order_class"` // "simple" (or ""), "bracket", "oco", "oto"
	Type           string           `json:"type"`        // "market", "limit", …
	OrderType      string           `json:"order_type"`  // Alpaca's older name of type
	Side           string           `json:"side"`        // "buy", "sell"
	PositionIntent string           `json:"position_intent,omitempty"`
	TimeInForce    string           `json:"time_in_force"` // "day", "gtc", …
	Status         string           `json:"status"`        // "new", "filled", "canceled", "rejected", …
	Notional       *decimal.Decimal `json:"notional"`
	Qty            *decimal.Decimal `json:"qty"`
	FilledQty      decimal.Decimal  `json:"filled_qty"`
	FilledAvgPrice *decimal.Decimal `json:"filled_avg_price"`
	LimitPrice     *decimal.Decimal `json:"limit_price"`
	StopPrice      *decimal.Decimal `json:"stop_price"`
	TrailPrice     *decimal.Decimal `json:"trail_price"`
	TrailPercent   *decimal.Decimal `json:"trail_percent"`
	HWM            *decimal.Decimal `json:"hwm"`
	ExtendedHours  bool             `json:"extended_hours"`
	Legs           []OrderJSON      `json:"legs"`
	// Commission is what the fills cost. Alpaca's Broker API reports it on
	// orders and its Trading API leaves it out (commission-free trading):
	// then it is nil, read as zero. The paper broker fills it in.
	Commission *decimal.Decimal `json:"commission,omitempty"`
}

// TradeUpdateJSON is one event of GET /v2/events/trades, Alpaca's
// trade-update stream (Server-Sent Events, one "data: " line each):
// event is "new", "fill", "partial_fill", "canceled", "expired",
// "replaced", "rejected", …; order is the order as of the event. A fill
// carries execution_id, price and qty (of the execution), position_qty
// (the position in the symbol after it) and timestamp (when it
// executed); other events leave them out.
type TradeUpdateJSON struct {
	Event       string           `json:"event"`
	EventID     string           `json:"event_id"` // a ULID, ordered as the events
	ExecutionID string           `json:"execution_id,omitempty"`
	At          time.Time        `json:"at"`
	Order       OrderJSON        `json:"order"`
	Timestamp   *time.Time       `json:"timestamp,omitempty"`
	Price       *decimal.Decimal `json:"price,omitempty"`
	Qty         *decimal.Decimal `json:"qty,omitempty"`
	PositionQty *decimal.Decimal `json:"position_qty,omitempty"`
}

// OrderRequestJSON is the body of POST /v2/orders, Alpaca's: exactly one
// of Qty and Notional; StopLoss and TakeProfit for the legs of a
// bracket, OTO or OCO order. Tradekit's client sends simple market and
// limit orders, with a stop-loss leg when the order has one.
type OrderRequestJSON struct {
	Symbol         string           `json:"symbol"`
	Qty            *decimal.Decimal `json:"qty,omitempty"`
	Notional       *decimal.Decimal `json:"notional,omitempty"`
	Side           string           `json:"side"`          // "buy", "sell"
	Type           string           `json:"type"`          // "market", "limit", "stop", "stop_limit", "trailing_stop"
	TimeInForce    string           `json:"time_in_force"` // "day", "gtc", "opg", "cls", "ioc", "fok"
	LimitPrice     *decimal.Decimal `json:"limit_price,omitempty"`
	StopPrice      *decimal.Decimal `json:"stop_price,omitempty"`
	TrailPrice     *decimal.Decimal `json:"trail_price,omitempty"`
	TrailPercent   *decimal.Decimal `json:"trail_percent,omitempty"`
	ExtendedHours  bool             `json:"extended_hours,omitempty"`
	ClientOrderID  string           `json:"client_order_id,omitempty"`
	OrderClass     string           `json:"order_class,omitempty"` // "simple", "bracket", "oco", "oto", "mleg"
	TakeProfit     *TakeProfitJSON  `json:"take_profit,omitempty"`
	StopLoss       *StopLossJSON    `json:"stop_loss,omitempty"`
	PositionIntent string           `json:"position_intent,omitempty"`
	Legs           []any            `json:"legs,omitempty"` // multi-leg option orders, refused by the paper broker
}

// TakeProfitJSON is the take-profit leg of an order request.
type TakeProfitJSON struct {
	LimitPrice *decimal.Decimal `json:"limit_price"`
}

// StopLossJSON is the stop-loss leg of an order request: a stop order
// at StopPrice, or a stop-limit order when LimitPrice is set.
type StopLossJSON struct {
	StopPrice  *decimal.Decimal `json:"stop_price"`
	LimitPrice *decimal.Decimal `json:"limit_price,omitempty"`
}

// ReplaceRequestJSON is the body of PATCH /v2/orders/{id}: the fields to
// change, each absent or null to keep the order's.
type ReplaceRequestJSON struct {
	Qty           *decimal.Decimal `json:"qty"`
	LimitPrice    *decimal.Decimal `json:"limit_price"`
	StopPrice     *decimal.Decimal `json:"stop_price"`
	Trail         *decimal.Decimal `json:"trail"`
	TimeInForce   string           `json:"time_in_force"`
	ClientOrderID string           `json:"client_order_id"`
}

// MultiStatusJSON is an element of the 207 answers of DELETE /v2/orders
// (ID set) and DELETE /v2/positions (Symbol set): one item's status and
// its body, an order or an [ErrorJSON].
type MultiStatusJSON struct {
	ID     string `json:"id,omitempty"`
	Symbol string `json:"symbol,omitempty"`
	Status int    `json:"status"`
	Body   any    `json:"body"`
}

// ActivityJSON is an element of GET /v2/account/activities: a trade
// activity (activity_type FILL).
type ActivityJSON struct {
	ID              string          `json:"id"`
	ActivityType    string          `json:"activity_type"` // "FILL"
	TransactionTime time.Time       `json:"transaction_time"`
	Type            string          `json:"type"` // "fill", "partial_fill"
	Price           decimal.Decimal `json:"price"`
	Qty             decimal.Decimal `json:"qty"`
	Side            string          `json:"side"`
	Symbol          string          `json:"symbol"`
	LeavesQty       decimal.Decimal `json:"leaves_qty"`
	CumQty          decimal.Decimal `json:"cum_qty"`
	OrderID         string          `json:"order_id"`
	OrderStatus     string          `json:"order_status"`
}

// AccountConfigurationsJSON is the body of GET and PATCH
// /v2/account/configurations.
type AccountConfigurationsJSON struct {
	DtbpCheck            string          `json:"dtbp_check"`          // "entry", "exit", "both"
	TradeConfirmEmail    string          `json:"trade_confirm_email"` // "all", "none"
	SuspendTrade         bool            `json:"suspend_trade"`
	NoShorting           bool            `json:"no_shorting"`
	FractionalTrading    bool            `json:"fractional_trading"`
	MaxMarginMultiplier  decimal.Decimal `json:"max_margin_multiplier"`
	PDTCheck             string          `json:"pdt_check"`
	TradeSuspendedByUser bool            `json:"trade_suspended_by_user"`
}

// ClockJSON is the body of GET /v2/clock. Times carry the exchange's
// UTC offset, as Alpaca's do.
type ClockJSON struct {
	Timestamp time.Time `json:"timestamp"`
	IsOpen    bool      `json:"is_open"`
	NextOpen  time.Time `json:"next_open"`
	NextClose time.Time `json:"next_close"`
}

// CalendarDayJSON is an element of GET /v2/calendar: a trading day and
// its regular session in the exchange's local time ("09:30", "16:00").
type CalendarDayJSON struct {
	Date           string `json:"date"` // YYYY-MM-DD
	Open           string `json:"open"`
	Close          string `json:"close"`
	SessionOpen    string `json:"session_open"`  // "0930"
	SessionClose   string `json:"session_close"` // "1600"
	SettlementDate string `json:"settlement_date"`
}

// AssetJSON is an element of GET /v2/assets and the body of GET
// /v2/assets/{symbol_or_id}.
type AssetJSON struct {
	ID                           string   `json:"id"`
	Class                        string   `json:"class"` // "us_equity", "crypto"
	Exchange                     string   `json:"exchange"`
	Symbol                       string   `json:"symbol"`
	Name                         string   `json:"name"`
	Status                       string   `json:"status"` // "active", "inactive"
	Tradable                     bool     `json:"tradable"`
	Marginable                   bool     `json:"marginable"`
	MaintenanceMarginRequirement uint     `json:"maintenance_margin_requirement"`
	Shortable                    bool     `json:"shortable"`
	EasyToBorrow                 bool     `json:"easy_to_borrow"`
	Fractionable                 bool     `json:"fractionable"`
	Attributes                   []string `json:"attributes"`
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
