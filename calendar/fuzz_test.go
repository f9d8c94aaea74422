package calendar_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// FuzzParseDate checks that ParseDate never panics, that every error
// wraps ErrInvalid and that a parsed date prints back to its input.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2024-07-04", "1990-01-01", "2100-12-31", "2024-02-30", "", "0000-00-00", "9999-12-31", "2024-1-1", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := calendar.ParseDate(s)
		if err != nil {
			if !errors.Is(err, tradekit.ErrInvalid) {
				t.Fatalf("ParseDate(%q) error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if !d.IsValid() || d.String() != s {
			t.Fatalf("ParseDate(%q) = %v, does not round-trip", s, d)
		}
	})
}

// FuzzCalendar feeds arbitrary dates to every calendar: nothing panics,
// Next and Previous return trading days on the right side of the input,
// and Sessions errors wrap ErrInvalid.
func FuzzCalendar(f *testing.F) {
	f.Add(2024, 7, 4, 30)
	f.Add(1989, 12, 31, 3)
	f.Add(2100, 12, 31, 1)
	f.Add(0, 0, 0, -5)
	f.Add(1<<40, 13, 99, 400)
	f.Fuzz(func(t *testing.T, y, m, d, span int) {
		date := calendar.Date{Year: y, Month: time.Month(m), Day: d}
		for _, e := range calendar.Exchanges() {
			c, _ := calendar.Lookup(e.Symbol)
			c.IsTradingDay(date)
			c.Holiday(date)
			c.CloseTime(date)
			if y > -1_000_000 && y < 1_000_000 {
				n, p := c.Next(date), c.Previous(date)
				if !c.IsTradingDay(n) || !c.IsTradingDay(p) {
					t.Fatalf("%s: Next/Previous(%v) = %v/%v, not trading days", e.Symbol, date, n, p)
				}
				if date.IsValid() && (!n.After(date) || !p.Before(date)) {
					t.Fatalf("%s: Next/Previous(%v) = %v/%v, wrong side", e.Symbol, date, n, p)
				}
			}
			if _, err := c.Holidays(y); err != nil && !errors.Is(err, tradekit.ErrInvalid) {
				t.Fatalf("Holidays(%d): %v", y, err)
			}
			to := date.AddDays(span % 4000)
			if _, err := c.Sessions(date, to); err != nil && !errors.Is(err, tradekit.ErrInvalid) {
				t.Fatalf("Sessions(%v, %v): %v", date, to, err)
			}
		}
	})
}
