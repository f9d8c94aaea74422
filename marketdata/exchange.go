package marketdata

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// Exchange is a trading venue. The rows come from [calendar.Exchanges]
// (the schema migration inserts them); the id is [ExchangeID] of the symbol.
type Exchange struct {
	ID       uuid.UUID `bun:"id,pk"`
	Symbol   string    `bun:"symbol"`
	MIC      string    `bun:"mic"`
	Name     string    `bun:"name"`
	TimeZone string    `bun:"timezone"`
	Country  string    `bun:"country"`
	Currency string    `bun:"currency"`
	// OpenTime and CloseTime bound the regular session, local "HH:MM".
	OpenTime  string `bun:"open_time"`
	CloseTime string `bun:"close_time"`
}

// Calendar returns the trading calendar of the exchange, and false when
// the package calendar has none for its symbol.
func (e Exchange) Calendar() (*calendar.Calendar, bool) {
	return calendar.Lookup(e.Symbol)
}

// Holiday is a day on which an exchange is closed or closes early, with a
// stable id ([HolidayID]).
type Holiday struct {
	ID         uuid.UUID
	ExchangeID uuid.UUID
	calendar.Holiday
}

// HolidayFilter selects the kinds of holidays [Holidays] returns.
type HolidayFilter string

// The holiday filters: full-day closures (the default), early closes, both.
const (
	HolidaysClosed     HolidayFilter = "closed"
	HolidaysEarlyClose HolidayFilter = "early_close"
	HolidaysAll        HolidayFilter = "all"
)

// Holidays returns the holidays of the exchange in the given years, in
// date order, of the kinds filter selects ("" means [HolidaysClosed]).
// The error wraps [tradekit.ErrInvalid] for a year outside
// [calendar.MinYear]..[calendar.MaxYear] or an unknown filter, and
// [tradekit.ErrNotFound] when the exchange has no calendar.
func Holidays(e Exchange, filter HolidayFilter, years ...int) ([]Holiday, error) {
	switch filter {
	case "":
		filter = HolidaysClosed
	case HolidaysClosed, HolidaysEarlyClose, HolidaysAll:
	default:
		return nil, fmt.Errorf("marketdata: holiday type %q: want closed, early_close or all: %w", filter, tradekit.ErrInvalid)
	}
	cal, ok := e.Calendar()
	if !ok {
		return nil, fmt.Errorf("marketdata: no calendar for exchange %s: %w", e.Symbol, tradekit.ErrNotFound)
	}
	var out []Holiday
	for _, y := range years {
		hs, err := cal.Holidays(y)
		if err != nil {
			return nil, fmt.Errorf("marketdata: holidays of %s: %w", e.Symbol, err)
		}
		for _, h := range hs {
			if filter != HolidaysAll && string(h.Type) != string(filter) {
				continue
			}
			out = append(out, Holiday{ID: HolidayID(e.ID, h.Date), ExchangeID: e.ID, Holiday: h})
		}
	}
	return out, nil
}
