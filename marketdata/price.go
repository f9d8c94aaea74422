package marketdata

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// Price is one day's OHLCV record of an asset. There is at most one per
// asset and date; its id is [PriceID] of the two.
type Price struct {
	ID      uuid.UUID
	AssetID uuid.UUID
	Date    calendar.Date
	Open    decimal.Decimal
	High    decimal.Decimal
	Low     decimal.Decimal
	Close   decimal.Decimal
	Volume  int64
}

// Validate checks the bar's sanity: a valid date, positive prices,
//
//	high >= max(open, close, low)  and  low <= min(open, close)
//
// and a volume of zero or more. The error names the first column at fault
// and wraps [tradekit.ErrInvalid].
func (p Price) Validate() error {
	if !p.Date.IsValid() {
		return fmt.Errorf("marketdata: invalid date %v: %w", p.Date, tradekit.ErrInvalid)
	}
	for _, c := range [...]struct {
		name string
		v    decimal.Decimal
	}{{"open", p.Open}, {"high", p.High}, {"low", p.Low}, {"close", p.Close}} {
		if !c.v.IsPositive() {
			return fmt.Errorf("marketdata: %s: %s %s: prices must be positive: %w", p.Date, c.name, c.v, tradekit.ErrInvalid)
		}
	}
	switch {
	case p.High.LessThan(p.Open) || p.High.LessThan(p.Close):
		return fmt.Errorf("marketdata: %s: high %s is below open %s or close %s: %w", p.Date, p.High, p.Open, p.Close, tradekit.ErrInvalid)
	case p.Low.GreaterThan(p.Open) || p.Low.GreaterThan(p.Close):
		return fmt.Errorf("marketdata: %s: low %s is above open %s or close %s: %w", p.Date, p.Low, p.Open, p.Close, tradekit.ErrInvalid)
	case p.Volume < 0:
		return fmt.Errorf("marketdata: %s: negative volume %d: %w", p.Date, p.Volume, tradekit.ErrInvalid)
	}
	return nil
}
