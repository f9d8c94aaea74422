package brokers

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"
)

// Account is a brokerage account's identity and balances.
type Account struct {
	ID       string          // the broker's id of the account
	Number   string          // the account number as the broker shows it to its customer
	Status   string          // the broker's status word, e.g. "ACTIVE"
	Currency string          // ISO 4217, e.g. "USD"
	Cash     decimal.Decimal // cash balance
	Equity   decimal.Decimal // cash plus the market value of the positions
}

// Position is an open position in one symbol.
type Position struct {
	Symbol        string
	Quantity      decimal.Decimal // negative for a short position
	AvgEntryPrice decimal.Decimal // average cost per unit
	MarketValue   decimal.Decimal // as the broker values it
	CostBasis     decimal.Decimal // Quantity × AvgEntryPrice
}

// Side is the side of an order or a fill.
type Side string

// The sides.
const (
	Buy  Side = "buy"
	Sell Side = "sell"
)

// Fill is an executed trade: all or part of an order.
type Fill struct {
	ID       string // the broker's id of the order the fill belongs to
	Symbol   string
	Side     Side
	Quantity decimal.Decimal // positive
	Price    decimal.Decimal // average price of the quantity filled
	Time     time.Time
}

// EquityPoint is an account's equity at the close of a day, and the cash
// moved into the account (positive) or out of it (negative) that day by
// deposits, withdrawals and transfers: money that is not a return.
type EquityPoint struct {
	Date   time.Time // midnight UTC of the day
	Equity decimal.Decimal
	Flow   decimal.Decimal
}

// Broker is one user's account at a broker, reached with that user's
// authorization. Implementations return errors that wrap
// [github.com/tradekit/tradekit.ErrUnauthorized] when the authorization is
// no longer valid, and [github.com/tradekit/tradekit.ErrUnavailable] when
// the broker cannot be reached or fails; a refusal over the broker's rate
// limit that says when to come back also has a RetryAfter method (see
// [RetryAfter]).
type Broker interface {
	// Account returns the account's identity and balances.
	Account(ctx context.Context) (Account, error)
	// Positions returns the open positions.
	Positions(ctx context.Context) ([]Position, error)
	// Fills returns the fills after the given time, oldest first.
	Fills(ctx context.Context, after time.Time) ([]Fill, error)
	// History returns the account's daily equity over the past year,
	// oldest first.
	History(ctx context.Context) ([]EquityPoint, error)
}

// RetryAfter returns how long the broker asked its caller to wait before
// its next request, when err is the broker's refusal of a request over
// its rate limit that says so (Alpaca: 429 with Retry-After): err, or an
// error it wraps, has a method RetryAfter() time.Duration that returns
// more than zero. Requests sent before then are refused too, and only
// spend what a caller's account has left of its limit when it resets.
func RetryAfter(err error) (time.Duration, bool) {
	var r interface{ RetryAfter() time.Duration }
	if errors.As(err, &r) {
		if d := r.RetryAfter(); d > 0 {
			return d, true
		}
	}
	return 0, false
}
