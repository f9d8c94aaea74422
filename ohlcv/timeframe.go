package ohlcv

import (
	"fmt"
	"strings"
	"time"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// Timeframe is the length of a series' bars. Its values are the names the
// API uses: "1d", "1w" and "1M".
type Timeframe string

// The timeframes of daily, weekly (ISO 8601 week) and monthly bars.
const (
	Daily   Timeframe = "1d"
	Weekly  Timeframe = "1w"
	Monthly Timeframe = "1M"
)

// Timeframes returns every timeframe, shortest first: the order the API
// documents them in.
func Timeframes() []Timeframe { return []Timeframe{Daily, Weekly, Monthly} }

// ParseTimeframe returns the timeframe named s. The error is a
// [*tradekit.ParamError] for the parameter "timeframe" when s names none.
func ParseTimeframe(s string) (Timeframe, error) {
	switch tf := Timeframe(s); tf {
	case Daily, Weekly, Monthly:
		return tf, nil
	}
	names := make([]string, 0, 3)
	for _, tf := range Timeframes() {
		names = append(names, string(tf))
	}
	return "", &tradekit.ParamError{Param: "timeframe",
		Msg: fmt.Sprintf("unknown timeframe %s; want %s", tradekit.Quote(s), strings.Join(names, ", "))}
}

// String returns the timeframe's name.
func (tf Timeframe) String() string { return string(tf) }

// period returns the function that numbers the periods of tf: dates in
// the same week (or month) get the same number, later periods larger ones.
func (tf Timeframe) period() func(calendar.Date) int {
	switch tf {
	case Weekly:
		// Days since Monday 1970-01-05, floored to weeks.
		monday := calendar.NewDate(1970, time.January, 5)
		return func(d calendar.Date) int {
			n := d.Sub(monday)
			if n < 0 {
				n -= 6
			}
			return n / 7
		}
	case Monthly:
		return func(d calendar.Date) int { return d.Year*12 + int(d.Month) }
	}
	return nil
}

// Resample returns s in timeframe tf, as the package documentation
// describes: s itself for [Daily], or new weekly or monthly bars. s must
// be daily bars with strictly ascending dates and all five columns;
// Resample panics if a date is out of order or tf is not one of the
// package's timeframes ([ParseTimeframe] returns only those).
func (s Series) Resample(tf Timeframe) Series {
	if tf == Daily {
		return s
	}
	period := tf.period()
	if period == nil {
		panic("ohlcv: Resample to unknown timeframe " + string(tf))
	}
	var out Series
	key := 0
	for i, d := range s.Dates {
		if i > 0 && !d.After(s.Dates[i-1]) {
			panic(fmt.Sprintf("ohlcv: Resample: bar %d (%s) is not after bar %d (%s)", i, d, i-1, s.Dates[i-1]))
		}
		if k := period(d); i == 0 || k != key {
			key = k
			out.Dates = append(out.Dates, d)
			out.Open = append(out.Open, s.Open[i])
			out.High = append(out.High, s.High[i])
			out.Low = append(out.Low, s.Low[i])
			out.Close = append(out.Close, s.Close[i])
			out.Volume = append(out.Volume, s.Volume[i])
			continue
		}
		last := len(out.Dates) - 1
		out.Dates[last] = d
		out.High[last] = max(out.High[last], s.High[i])
		out.Low[last] = min(out.Low[last], s.Low[i])
		out.Close[last] = s.Close[i]
		out.Volume[last] += s.Volume[i]
	}
	return out
}
