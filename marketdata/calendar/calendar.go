// Package calendar is the old import path of package
// [github.com/tradekit/tradekit/calendar], kept so that programs written
// against it still build: every name here is the new package's.
//
// Deprecated: import github.com/tradekit/tradekit/calendar.
package calendar

import (
	"time"

	cal "github.com/tradekit/tradekit/calendar"
)

// The years a calendar computes; see the new package.
const (
	MinYear = cal.MinYear
	MaxYear = cal.MaxYear
)

// The kinds of holiday; see the new package.
const (
	Closed     = cal.Closed
	EarlyClose = cal.EarlyClose
)

type (
	// Calendar is [cal.Calendar].
	Calendar = cal.Calendar
	// Date is [cal.Date].
	Date = cal.Date
	// Exchange is [cal.Exchange].
	Exchange = cal.Exchange
	// Holiday is [cal.Holiday].
	Holiday = cal.Holiday
	// Kind is [cal.Kind].
	Kind = cal.Kind
)

// Lookup is [cal.Lookup].
func Lookup(code string) (*Calendar, bool) { return cal.Lookup(code) }

// Exchanges is [cal.Exchanges].
func Exchanges() []Exchange { return cal.Exchanges() }

// DateOf is [cal.DateOf].
func DateOf(t time.Time) Date { return cal.DateOf(t) }

// NewDate is [cal.NewDate].
func NewDate(year int, month time.Month, day int) Date { return cal.NewDate(year, month, day) }

// ParseDate is [cal.ParseDate].
func ParseDate(s string) (Date, error) { return cal.ParseDate(s) }
