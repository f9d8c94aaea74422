package calendar

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tradekit/tradekit"
)

// MinYear and MaxYear bound the years for which holidays are computed.
// [Calendar.Holidays] and [Calendar.Sessions] return an error wrapping
// [tradekit.ErrInvalid] outside [MinYear, MaxYear]; the single-day methods
// ([Calendar.IsTradingDay], [Calendar.Next], [Calendar.Previous]) treat
// every weekday outside the range as a trading day, since no holiday rule
// is known there.
const (
	MinYear = 1990
	MaxYear = 2100
)

const numYears = MaxYear - MinYear + 1

// Kind tells a full-day closure from an early close.
type Kind string

// The kinds of [Holiday].
const (
	// Closed is a day on which the exchange does not trade at all.
	Closed Kind = "closed"
	// EarlyClose is a trading day that ends before the regular close; the
	// holiday's Close field gives the time.
	EarlyClose Kind = "early_close"
)

// Holiday is a weekday on which an exchange is closed or closes early.
// Holidays that fall on a weekend are not listed: their observed
// substitute day, if any, is.
type Holiday struct {
	// Date is the local date at the exchange.
	Date Date `json:"date"`
	// Name is the English name of the holiday or event, e.g. "Good Friday"
	// or "Christmas Day (observed)".
	Name string `json:"name"`
	// Type is [Closed] or [EarlyClose].
	Type Kind `json:"type"`
	// Close is the local closing time "HH:MM" of an early close, and ""
	// for a closure.
	Close string `json:"closeTime,omitempty"`
}

// Exchange describes a venue: its identifiers, time zone, currency and
// regular session.
type Exchange struct {
	// Symbol is the common short name, e.g. "NYSE".
	Symbol string `json:"symbol"`
	// MIC is the ISO 10383 market identifier code, e.g. "XNYS"; empty for
	// the CRYPTO pseudo-exchange.
	MIC string `json:"mic"`
	// Name is the full name.
	Name string `json:"name"`
	// TimeZone is the IANA time-zone name of the exchange, e.g.
	// "America/New_York".
	TimeZone string `json:"timezone"`
	// Country is the ISO 3166-1 alpha-2 country code; empty for CRYPTO.
	Country string `json:"country"`
	// Currency is the ISO 4217 code of the main trading currency.
	Currency string `json:"currency"`
	// Open and Close bound the regular continuous session, local "HH:MM".
	// Lunch breaks (JPX, HKEX) are not modelled.
	Open  string `json:"openTime"`
	Close string `json:"closeTime"`
}

// Calendar answers trading-day questions for one exchange. A Calendar is
// immutable from the caller's point of view and safe for concurrent use:
// the holidays of each year are computed once, on first use, and memoised.
type Calendar struct {
	ex      Exchange
	weekend [7]bool
	rules   func(y int) []Holiday // raw rules for year y; nil for none
	years   [numYears]yearCache
}

type yearCache struct {
	once sync.Once
	hols []Holiday // sorted, weekdays only, one entry per date
	// closed and early are bitsets over the day of year (bit yd-1).
	closed [6]uint64
	early  [6]uint64
}

func newCalendar(ex Exchange, rules func(int) []Holiday, weekend ...time.Weekday) *Calendar {
	c := &Calendar{ex: ex, rules: rules}
	for _, w := range weekend {
		c.weekend[w] = true
	}
	return c
}

// The calendars, one instance each; their caches are filled lazily under
// sync.Once and hold values that never change, so sharing them is safe.
var calendars = []*Calendar{
	newCalendar(Exchange{"NYSE", "XNYS", "New York Stock Exchange", "America/New_York", "US", "USD", "09:30", "16:00"}, nyseRules, time.Saturday, time.Sunday),
	newCalendar(Exchange{"NASDAQ", "XNAS", "Nasdaq Stock Market", "America/New_York", "US", "USD", "09:30", "16:00"}, nyseRules, time.Saturday, time.Sunday),
	newCalendar(Exchange{"LSE", "XLON", "London Stock Exchange", "Europe/London", "GB", "GBP", "08:00", "16:30"}, lseRules, time.Saturday, time.Sunday),
	newCalendar(Exchange{"XETRA", "XETR", "Xetra (Deutsche Börse)", "Europe/Berlin", "DE", "EUR", "09:00", "17:30"}, xetraRules, time.Saturday, time.Sunday),
	newCalendar(Exchange{"TSX", "XTSE", "Toronto Stock Exchange", "America/Toronto", "CA", "CAD", "09:30", "16:00"}, tsxRules, time.Saturday, time.Sunday),
	newCalendar(Exchange{"ASX", "XASX", "Australian Securities Exchange", "Australia/Sydney", "AU", "AUD", "10:00", "16:10"}, asxRules, time.Saturday, time.Sunday),
	newCalendar(Exchange{"JPX", "XJPX", "Japan Exchange Group (Tokyo Stock Exchange)", "Asia/Tokyo", "JP", "JPY", "09:00", "15:30"}, jpxRules, time.Saturday, time.Sunday),
	newCalendar(Exchange{"HKEX", "XHKG", "Hong Kong Exchanges and Clearing", "Asia/Hong_Kong", "HK", "HKD", "09:30", "16:00"}, hkexRules, time.Saturday, time.Sunday),
	newCalendar(Exchange{"CRYPTO", "", "Crypto-asset markets (24/7)", "UTC", "", "USD", "00:00", "24:00"}, nil),
}

// Exchanges returns the exchanges that have a calendar, in a fixed order
// (NYSE, NASDAQ, LSE, XETRA, TSX, ASX, JPX, HKEX, CRYPTO). The slice is the
// caller's to modify.
func Exchanges() []Exchange {
	out := make([]Exchange, len(calendars))
	for i, c := range calendars {
		out[i] = c.ex
	}
	return out
}

// Lookup returns the calendar of the exchange whose symbol or MIC equals
// code, ignoring case ("nyse", "XNYS", "crypto"). It reports false for an
// unknown code.
func Lookup(code string) (*Calendar, bool) {
	for _, c := range calendars {
		if strings.EqualFold(code, c.ex.Symbol) || (c.ex.MIC != "" && strings.EqualFold(code, c.ex.MIC)) {
			return c, true
		}
	}
	return nil, false
}

// Exchange returns the description of the calendar's exchange.
func (c *Calendar) Exchange() Exchange { return c.ex }

// Location loads the exchange's time zone from the system's time-zone
// database (see [time.LoadLocation]).
func (c *Calendar) Location() (*time.Location, error) {
	return time.LoadLocation(c.ex.TimeZone)
}

func checkYear(y int) error {
	if y < MinYear || y > MaxYear {
		return fmt.Errorf("calendar: year %d outside %d..%d: %w", y, MinYear, MaxYear, tradekit.ErrInvalid)
	}
	return nil
}

// year returns the memoised holidays of y, which must be in range.
func (c *Calendar) year(y int) *yearCache {
	yc := &c.years[y-MinYear]
	yc.once.Do(func() { c.build(y, yc) })
	return yc
}

func (c *Calendar) build(y int, yc *yearCache) {
	if c.rules == nil {
		return
	}
	raw := c.rules(y)
	hols := make([]Holiday, 0, len(raw))
	for _, h := range raw {
		if h.Date.Year != y || c.weekend[h.Date.Weekday()] {
			continue
		}
		hols = append(hols, h)
	}
	// Stable sort keeps the first rule that names a date; a closure then
	// beats an early close on the same date.
	slices.SortStableFunc(hols, func(a, b Holiday) int {
		if d := a.Date.Compare(b.Date); d != 0 {
			return d
		}
		if a.Type != b.Type {
			if a.Type == Closed {
				return -1
			}
			return 1
		}
		return 0
	})
	hols = slices.CompactFunc(hols, func(a, b Holiday) bool { return a.Date == b.Date })
	yc.hols = slices.Clip(hols)
	for _, h := range yc.hols {
		i := h.Date.YearDay() - 1
		if h.Type == Closed {
			yc.closed[i/64] |= 1 << (i % 64)
		} else {
			yc.early[i/64] |= 1 << (i % 64)
		}
	}
}

// Holidays returns the closures and early closes of year, sorted by date,
// weekdays only. The slice is a fresh copy. The error wraps
// [tradekit.ErrInvalid] when year is outside [MinYear, MaxYear].
func (c *Calendar) Holidays(year int) ([]Holiday, error) {
	if err := checkYear(year); err != nil {
		return nil, err
	}
	return slices.Clone(c.year(year).hols), nil
}

// Holiday returns the closure or early close on d, and false if d is a
// regular trading day, a weekend day or outside [MinYear, MaxYear].
func (c *Calendar) Holiday(d Date) (Holiday, bool) {
	if !d.IsValid() || checkYear(d.Year) != nil || c.weekend[d.Weekday()] {
		return Holiday{}, false
	}
	yc := c.year(d.Year)
	i := d.YearDay() - 1
	if (yc.closed[i/64]|yc.early[i/64])&(1<<(i%64)) == 0 {
		return Holiday{}, false
	}
	k, _ := slices.BinarySearchFunc(yc.hols, d, func(h Holiday, d Date) int { return h.Date.Compare(d) })
	return yc.hols[k], true
}

// IsTradingDay reports whether the exchange holds a session on d (an
// early close counts as a session). Weekends are never trading days
// (every day is one on CRYPTO). Outside [MinYear, MaxYear] every weekday
// counts as a trading day; an invalid Date is never one.
func (c *Calendar) IsTradingDay(d Date) bool {
	if !d.IsValid() || c.weekend[d.Weekday()] {
		return false
	}
	if checkYear(d.Year) != nil {
		return true
	}
	i := d.YearDay() - 1
	return c.year(d.Year).closed[i/64]&(1<<(i%64)) == 0
}

// CloseTime returns the local closing time "HH:MM" of the session on d:
// the early-close time on an early close, the regular close otherwise. It
// reports false if d is not a trading day.
func (c *Calendar) CloseTime(d Date) (string, bool) {
	if !c.IsTradingDay(d) {
		return "", false
	}
	if h, ok := c.Holiday(d); ok && h.Type == EarlyClose {
		return h.Close, true
	}
	return c.ex.Close, true
}

// Next returns the first trading day strictly after d.
func (c *Calendar) Next(d Date) Date {
	for {
		d = d.AddDays(1)
		if c.IsTradingDay(d) {
			return d
		}
	}
}

// Previous returns the last trading day strictly before d.
func (c *Calendar) Previous(d Date) Date {
	for {
		d = d.AddDays(-1)
		if c.IsTradingDay(d) {
			return d
		}
	}
}

// Sessions returns the trading days from from to to, both included, in
// order. It returns nil if from is after to. The error wraps
// [tradekit.ErrInvalid] if a bound is not a valid date or its year is
// outside [MinYear, MaxYear].
func (c *Calendar) Sessions(from, to Date) ([]Date, error) {
	for _, d := range [2]Date{from, to} {
		if !d.IsValid() {
			return nil, fmt.Errorf("calendar: invalid date %v: %w", d, tradekit.ErrInvalid)
		}
		if err := checkYear(d.Year); err != nil {
			return nil, err
		}
	}
	if from.After(to) {
		return nil, nil
	}
	n := to.Sub(from) + 1
	wk := 0
	for _, w := range c.weekend {
		if w {
			wk++
		}
	}
	out := make([]Date, 0, n-n/7*wk) // an upper bound: holidays only remove days
	w := from.Weekday()
	d := from
	for y := from.Year; y <= to.Year; y++ {
		yc := c.year(y)
		last := Date{y, time.December, 31}
		if to.Before(last) {
			last = to
		}
		i := d.YearDay() - 1
		for {
			if !c.weekend[w] && yc.closed[i/64]&(1<<(i%64)) == 0 {
				out = append(out, d)
			}
			w = (w + 1) % 7
			if d == last {
				break
			}
			d = nextDay(d)
			i++
		}
		d = nextDay(d)
	}
	return out, nil
}

// nextDay is AddDays(1) without the day-number round trip.
func nextDay(d Date) Date {
	if d.Day < 28 || d.Day < daysIn(d.Year, d.Month) {
		d.Day++
		return d
	}
	d.Day = 1
	if d.Month == time.December {
		d.Month = time.January
		d.Year++
		return d
	}
	d.Month++
	return d
}
