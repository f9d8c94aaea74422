package profiles

import (
	"testing"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

// TestAssetDaysAcrossMonths checks the day numbers newAsset derives,
// within a month from the day before's, against dayNumber on every
// weekday of 2023-2025 (weekends skipped, a leap day, month and year
// ends) and on a
// day given out of its month's range (Day 31 of April, which NewDate
// would normalise).
func TestAssetDaysAcrossMonths(t *testing.T) {
	var d []calendar.Date
	for x := calendar.NewDate(2023, 1, 1); x.Year < 2026; x = x.AddDays(1) {
		if wd := x.Weekday(); wd != time.Saturday && wd != time.Sunday {
			d = append(d, x)
		}
	}
	d = append(d, calendar.Date{Year: 2026, Month: 4, Day: 30}, calendar.Date{Year: 2026, Month: 4, Day: 31}, calendar.NewDate(2026, 5, 2))
	c := make([]float64, len(d))
	for i := range c {
		c[i] = 100 + float64(i%7)
	}
	a, err := newAsset(ohlcv.Series{Dates: d, Close: c}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range d {
		if a.days[i] != dayNumber(x) {
			t.Errorf("day %d (%v): %d, want dayNumber %d", i, x, a.days[i], dayNumber(x))
		}
	}
}
