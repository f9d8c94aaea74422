package backtest

import (
	"slices"
	"strings"

	"github.com/tradekit/tradekit/calendar"
)

// Sessions returns the trading days of a universe whose assets trade on
// the given exchanges (calendar symbols such as "NYSE"), from the first
// to the last bar of any asset, with the exchanges' names joined by "/":
// the calendar's sessions when every exchange's calendar gives the same
// days (NYSE and NASDAQ do). Otherwise, or for an exchange without a
// calendar, it returns nil and "": use the assets' own dates.
func Sessions(universe []Asset, exchanges []string) ([]calendar.Date, string) {
	var first, last calendar.Date
	for i := range universe {
		b := &universe[i].Bars
		if n := b.Len(); n > 0 {
			if first == (calendar.Date{}) || b.Dates[0].Before(first) {
				first = b.Dates[0]
			}
			if b.Dates[n-1].After(last) {
				last = b.Dates[n-1]
			}
		}
	}
	names := slices.Compact(slices.Sorted(slices.Values(exchanges)))
	if len(names) == 0 || first == (calendar.Date{}) {
		return nil, ""
	}
	var days []calendar.Date
	for _, ex := range names {
		c, ok := calendar.Lookup(ex)
		if !ok {
			return nil, ""
		}
		d, err := c.Sessions(first, last)
		if err != nil || days != nil && !slices.Equal(days, d) {
			return nil, ""
		}
		days = d
	}
	return days, strings.Join(names, "/")
}
