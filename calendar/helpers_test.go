package calendar_test

import (
	"testing"

	"github.com/tradekit/tradekit/calendar"
)

// mustLookup returns the calendar of code or stops the test.
func mustLookup(tb testing.TB, code string) *calendar.Calendar {
	tb.Helper()
	c, ok := calendar.Lookup(code)
	if !ok {
		tb.Fatalf("Lookup(%q): not found", code)
	}
	return c
}

// mustDate parses an ISO date or stops the test.
func mustDate(tb testing.TB, s string) calendar.Date {
	tb.Helper()
	d, err := calendar.ParseDate(s)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// datesOf returns the ISO dates of the holidays of kind k of year y.
func datesOf(tb testing.TB, c *calendar.Calendar, y int, k calendar.Kind) []string {
	tb.Helper()
	hs, err := c.Holidays(y)
	if err != nil {
		tb.Fatalf("Holidays(%d): %v", y, err)
	}
	out := []string{}
	for _, h := range hs {
		if h.Type == k {
			out = append(out, h.Date.String())
		}
	}
	return out
}

// earlyOf returns "date HH:MM" for each early close of year y.
func earlyOf(tb testing.TB, c *calendar.Calendar, y int) []string {
	tb.Helper()
	hs, err := c.Holidays(y)
	if err != nil {
		tb.Fatalf("Holidays(%d): %v", y, err)
	}
	out := []string{}
	for _, h := range hs {
		if h.Type == calendar.EarlyClose {
			out = append(out, h.Date.String()+" "+h.Close)
		}
	}
	return out
}
