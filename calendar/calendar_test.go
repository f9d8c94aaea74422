package calendar_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		code   string
		symbol string
		ok     bool
	}{
		{"NYSE", "NYSE", true},
		{"nyse", "NYSE", true},
		{"xnys", "NYSE", true},
		{"XNAS", "NASDAQ", true},
		{"lse", "LSE", true},
		{"Xetr", "XETRA", true},
		{"XTSE", "TSX", true},
		{"asx", "ASX", true},
		{"XJPX", "JPX", true},
		{"hkex", "HKEX", true},
		{"XHKG", "HKEX", true},
		{"crypto", "CRYPTO", true},
		{"", "", false},
		{"NOPE", "", false},
	}
	for _, tt := range tests {
		c, ok := calendar.Lookup(tt.code)
		if ok != tt.ok {
			t.Errorf("Lookup(%q) ok = %v, want %v", tt.code, ok, tt.ok)
			continue
		}
		if ok && c.Exchange().Symbol != tt.symbol {
			t.Errorf("Lookup(%q) = %s, want %s", tt.code, c.Exchange().Symbol, tt.symbol)
		}
	}
}

func TestExchanges(t *testing.T) {
	// MICs from ISO 10383, zones from the IANA tz database, currencies
	// from ISO 4217.
	want := map[string][3]string{
		"NYSE":   {"XNYS", "America/New_York", "USD"},
		"NASDAQ": {"XNAS", "America/New_York", "USD"},
		"LSE":    {"XLON", "Europe/London", "GBP"},
		"XETRA":  {"XETR", "Europe/Berlin", "EUR"},
		"TSX":    {"XTSE", "America/Toronto", "CAD"},
		"ASX":    {"XASX", "Australia/Sydney", "AUD"},
		"JPX":    {"XJPX", "Asia/Tokyo", "JPY"},
		"HKEX":   {"XHKG", "Asia/Hong_Kong", "HKD"},
		"CRYPTO": {"", "UTC", "USD"},
	}
	got := map[string][3]string{}
	for _, e := range calendar.Exchanges() {
		got[e.Symbol] = [3]string{e.MIC, e.TimeZone, e.Currency}
		if _, err := time.LoadLocation(e.TimeZone); err != nil {
			t.Errorf("%s: time zone %q: %v", e.Symbol, e.TimeZone, err)
		}
		if len(e.Open) != 5 || len(e.Close) != 5 {
			t.Errorf("%s: session %q-%q is not HH:MM", e.Symbol, e.Open, e.Close)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Exchanges() mismatch (-want +got):\n%s", diff)
	}
	ex := calendar.Exchanges()
	ex[0].Symbol = "changed"
	if calendar.Exchanges()[0].Symbol == "changed" {
		t.Error("Exchanges() shares its slice")
	}
}

func TestHolidaysYearRange(t *testing.T) {
	c := mustLookup(t, "NYSE")
	for _, y := range []int{calendar.MinYear - 1, calendar.MaxYear + 1, 0, -5, 1 << 40} {
		if _, err := c.Holidays(y); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("Holidays(%d) error = %v, want ErrInvalid", y, err)
		}
	}
	// Outside the range only weekends are known.
	if !c.IsTradingDay(mustDate(t, "1989-12-25")) || !c.IsTradingDay(mustDate(t, "2101-01-03")) {
		t.Error("weekdays outside the range should count as trading days")
	}
	if c.IsTradingDay(calendar.Date{Year: 2024, Month: 2, Day: 30}) {
		t.Error("an invalid date is a trading day")
	}
	if _, ok := c.Holiday(mustDate(t, "1989-12-25")); ok {
		t.Error("Holiday outside the range reported a holiday")
	}
}

// TestInvariants computes every year of every calendar and checks the
// shape of the result: sorted, unique, weekdays only, early closes with a
// time before the regular close.
func TestInvariants(t *testing.T) {
	for _, e := range calendar.Exchanges() {
		c := mustLookup(t, e.Symbol)
		for y := calendar.MinYear; y <= calendar.MaxYear; y++ {
			hs, err := c.Holidays(y)
			if err != nil {
				t.Fatal(err)
			}
			closures := 0
			for i, h := range hs {
				if h.Date.Year != y || !h.Date.IsValid() {
					t.Errorf("%s %d: bad date %v", e.Symbol, y, h.Date)
				}
				if wd := h.Date.Weekday(); wd == time.Saturday || wd == time.Sunday {
					t.Errorf("%s %d: weekend holiday %v", e.Symbol, y, h)
				}
				if i > 0 && !hs[i-1].Date.Before(h.Date) {
					t.Errorf("%s %d: not sorted or duplicate at %v", e.Symbol, y, h.Date)
				}
				switch h.Type {
				case calendar.Closed:
					closures++
					if h.Close != "" || c.IsTradingDay(h.Date) {
						t.Errorf("%s: closure %v inconsistent", e.Symbol, h)
					}
				case calendar.EarlyClose:
					if len(h.Close) != 5 || h.Close >= e.Close || !c.IsTradingDay(h.Date) {
						t.Errorf("%s: early close %v inconsistent", e.Symbol, h)
					}
				default:
					t.Errorf("%s: bad kind %q", e.Symbol, h.Type)
				}
				if got, ok := c.Holiday(h.Date); !ok || got != h {
					t.Errorf("%s: Holiday(%v) = %v, %v; want %v", e.Symbol, h.Date, got, ok, h)
				}
				if h.Name == "" {
					t.Errorf("%s: unnamed holiday %v", e.Symbol, h.Date)
				}
			}
			if e.Symbol != "CRYPTO" && (closures < 3 || closures > 20) {
				t.Errorf("%s %d: %d closures", e.Symbol, y, closures)
			}
		}
	}
}

func TestNextPrevious(t *testing.T) {
	tests := []struct {
		code, date, next, prev string
	}{
		{"NYSE", "2024-07-03", "2024-07-05", "2024-07-02"}, // July 4 closed
		{"NYSE", "2024-12-24", "2024-12-26", "2024-12-23"},
		{"NYSE", "2001-09-10", "2001-09-17", "2001-09-07"}, // September 11 closures
		{"NYSE", "2024-12-28", "2024-12-30", "2024-12-27"}, // from a Saturday
		{"LSE", "2022-12-23", "2022-12-28", "2022-12-22"},
		{"JPX", "2024-12-30", "2025-01-06", "2024-12-27"},  // year-end closure
		{"HKEX", "2025-01-28", "2025-02-03", "2025-01-27"}, // Lunar New Year
		{"CRYPTO", "2024-12-25", "2024-12-26", "2024-12-24"},
		{"NYSE", "2100-12-31", "2101-01-03", "2100-12-30"}, // past MaxYear: weekends only
	}
	for _, tt := range tests {
		c := mustLookup(t, tt.code)
		d := mustDate(t, tt.date)
		if got := c.Next(d).String(); got != tt.next {
			t.Errorf("%s Next(%s) = %s, want %s", tt.code, tt.date, got, tt.next)
		}
		if got := c.Previous(d).String(); got != tt.prev {
			t.Errorf("%s Previous(%s) = %s, want %s", tt.code, tt.date, got, tt.prev)
		}
	}
}

func TestSessions(t *testing.T) {
	nyse := mustLookup(t, "NYSE")
	// NYSE, last week of 2024: Christmas closed, Christmas Eve a half day.
	got, err := nyse.Sessions(mustDate(t, "2024-12-21"), mustDate(t, "2025-01-03"))
	if err != nil {
		t.Fatal(err)
	}
	var gotS []string
	for _, d := range got {
		gotS = append(gotS, d.String())
	}
	want := []string{"2024-12-23", "2024-12-24", "2024-12-26", "2024-12-27", "2024-12-30", "2024-12-31", "2025-01-02", "2025-01-03"}
	if diff := cmp.Diff(want, gotS); diff != "" {
		t.Errorf("Sessions mismatch (-want +got):\n%s", diff)
	}

	// Published session counts: NYSE traded 252 days in 2024 and 250 in
	// 2025 (NYSE trading-day statistics); 2001 had 248 after September 11.
	for _, tc := range []struct {
		y, n int
	}{{2024, 252}, {2025, 250}, {2001, 248}, {2012, 250}} {
		s, err := nyse.Sessions(calendar.Date{Year: tc.y, Month: 1, Day: 1}, calendar.Date{Year: tc.y, Month: 12, Day: 31})
		if err != nil || len(s) != tc.n {
			t.Errorf("NYSE sessions in %d = %d, %v; want %d", tc.y, len(s), err, tc.n)
		}
	}

	crypto := mustLookup(t, "CRYPTO")
	s, err := crypto.Sessions(mustDate(t, "2024-01-01"), mustDate(t, "2024-12-31"))
	if err != nil || len(s) != 366 {
		t.Errorf("CRYPTO sessions in 2024 = %d, %v; want 366", len(s), err)
	}

	// Sessions agrees with IsTradingDay day by day, over a decade.
	from, to := mustDate(t, "2015-01-01"), mustDate(t, "2025-12-31")
	for _, code := range []string{"NYSE", "LSE", "JPX", "HKEX"} {
		c := mustLookup(t, code)
		s, err := c.Sessions(from, to)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for d := from; !d.After(to); d = d.AddDays(1) {
			in := i < len(s) && s[i] == d
			if in {
				i++
			}
			if in != c.IsTradingDay(d) {
				t.Fatalf("%s: Sessions and IsTradingDay disagree on %v", code, d)
			}
		}
		if i != len(s) {
			t.Fatalf("%s: Sessions returned dates out of order", code)
		}
	}

	if s, err := nyse.Sessions(to, from); s != nil || err != nil {
		t.Errorf("reversed Sessions = %v, %v; want nil, nil", s, err)
	}
	for _, bad := range [][2]calendar.Date{
		{mustDate(t, "1989-12-01"), mustDate(t, "1990-01-31")},
		{mustDate(t, "2100-12-01"), mustDate(t, "2101-01-31")},
		{{Year: 2024, Month: 2, Day: 30}, mustDate(t, "2024-03-31")},
	} {
		if _, err := nyse.Sessions(bad[0], bad[1]); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("Sessions(%v, %v) error = %v, want ErrInvalid", bad[0], bad[1], err)
		}
	}
}

func TestCloseTime(t *testing.T) {
	tests := []struct {
		code, date, want string
		ok               bool
	}{
		{"LSE", "2024-12-24", "12:30", true},
		{"LSE", "2024-12-31", "12:30", true},
		{"LSE", "2023-12-22", "12:30", true}, // Christmas Eve on a Sunday: the Friday before
		{"LSE", "2024-12-23", "16:30", true},
		{"LSE", "2024-12-25", "", false},
		{"HKEX", "2024-02-09", "12:00", true},
		{"CRYPTO", "2024-12-25", "24:00", true},
	}
	for _, tt := range tests {
		got, ok := mustLookup(t, tt.code).CloseTime(mustDate(t, tt.date))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s CloseTime(%s) = %q, %v; want %q, %v", tt.code, tt.date, got, ok, tt.want, tt.ok)
		}
	}
}

func TestConcurrentFirstUse(t *testing.T) {
	c := mustLookup(t, "HKEX")
	var wg sync.WaitGroup
	results := make([][]calendar.Holiday, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = c.Holidays(2077)
		}()
	}
	wg.Wait()
	for _, r := range results[1:] {
		if diff := cmp.Diff(results[0], r); diff != "" {
			t.Fatalf("concurrent Holidays differ:\n%s", diff)
		}
	}
	// The result is a copy: changing it does not change the calendar.
	results[0][0].Name = "changed"
	again, _ := c.Holidays(2077)
	if again[0].Name == "changed" {
		t.Error("Holidays returned the cached slice")
	}
}
