package ohlcv

import (
	"fmt"
	"sort"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// Series is an asset's price bars as columns, oldest first: Dates[i] is
// the date of the bar whose prices are Open[i], High[i], Low[i], Close[i]
// and Volume[i]. Every non-nil slice has the same length. A consumer
// documents which columns it reads; the others may be nil (the formula
// evaluator, for one, needs no dates).
//
// A Series is a set of slice headers: copying it shares the arrays, and
// methods that return a Series share them too unless they say otherwise.
type Series struct {
	Dates                          []calendar.Date
	Open, High, Low, Close, Volume []float64
}

// Len returns the number of bars: the length of the longest of s's slices.
func (s Series) Len() int {
	n := len(s.Dates)
	for _, c := range s.columns() {
		n = max(n, len(c))
	}
	return n
}

// columns returns s's price columns in the order open, high, low, close,
// volume.
func (s Series) columns() [5][]float64 {
	return [5][]float64{s.Open, s.High, s.Low, s.Close, s.Volume}
}

// Check returns an error wrapping [tradekit.ErrInvalid] when s's non-nil
// slices differ in length or its dates are not strictly ascending.
func (s Series) Check() error {
	n := s.Len()
	names := [5]string{"open", "high", "low", "close", "volume"}
	if s.Dates != nil && len(s.Dates) != n {
		return fmt.Errorf("ohlcv: %d dates for %d bars: %w", len(s.Dates), n, tradekit.ErrInvalid)
	}
	for i, c := range s.columns() {
		if c != nil && len(c) != n {
			return fmt.Errorf("ohlcv: %d %s values for %d bars: %w", len(c), names[i], n, tradekit.ErrInvalid)
		}
	}
	for i := 1; i < len(s.Dates); i++ {
		if !s.Dates[i].After(s.Dates[i-1]) {
			return fmt.Errorf("ohlcv: bar %d (%s) is not after bar %d (%s): %w",
				i, s.Dates[i], i-1, s.Dates[i-1], tradekit.ErrInvalid)
		}
	}
	return nil
}

// Slice returns bars lo to hi-1 of s, sharing s's arrays; nil columns
// stay nil. It panics if the bounds are out of range, as slicing does.
func (s Series) Slice(lo, hi int) Series {
	cut := func(x []float64) []float64 {
		if x == nil {
			return nil
		}
		return x[lo:hi:hi]
	}
	var dates []calendar.Date
	if s.Dates != nil {
		dates = s.Dates[lo:hi:hi]
	}
	return Series{Dates: dates, Open: cut(s.Open), High: cut(s.High), Low: cut(s.Low), Close: cut(s.Close), Volume: cut(s.Volume)}
}

// Between returns the bars of s dated from from to to, inclusive, sharing
// s's arrays; a zero bound is open. s's dates must be ascending.
func (s Series) Between(from, to calendar.Date) Series {
	lo, hi := Between(s.Dates, from, to)
	return s.Slice(lo, hi)
}

// Between returns the index range [lo, hi) of the ascending dates from
// from to to, inclusive; a zero (invalid) bound is open.
func Between(dates []calendar.Date, from, to calendar.Date) (lo, hi int) {
	lo, hi = 0, len(dates)
	if from.IsValid() {
		lo = sort.Search(len(dates), func(i int) bool { return !dates[i].Before(from) })
	}
	if to.IsValid() {
		hi = sort.Search(len(dates), func(i int) bool { return dates[i].After(to) })
	}
	return lo, max(lo, hi)
}
