package calendar_test

import (
	"testing"

	"github.com/tradekit/tradekit/calendar"
)

// BenchmarkHolidays measures Holidays(year) once the year is memoised (a
// copy of the cached slice) for each calendar.
func BenchmarkHolidays(b *testing.B) {
	for _, code := range []string{"NYSE", "LSE", "JPX", "HKEX"} {
		c := mustLookup(b, code)
		b.Run(code, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := c.Holidays(2000 + i%31); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSessions10Years lists ten years of sessions (about 2,520 dates).
func BenchmarkSessions10Years(b *testing.B) {
	from := calendar.Date{Year: 2015, Month: 1, Day: 1}
	to := calendar.Date{Year: 2024, Month: 12, Day: 31}
	for _, code := range []string{"NYSE", "HKEX", "CRYPTO"} {
		c := mustLookup(b, code)
		b.Run(code, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := c.Sessions(from, to); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIsTradingDay measures the single-day check.
func BenchmarkIsTradingDay(b *testing.B) {
	c := mustLookup(b, "NYSE")
	d := calendar.Date{Year: 2024, Month: 7, Day: 4}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if c.IsTradingDay(d) {
			b.Fatal("July 4 is a holiday")
		}
	}
}
