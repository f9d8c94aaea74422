package studies

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/indicators"
	"github.com/tradekit/tradekit/indicators/formula"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/calendar"
)

// Bars is an asset's daily OHLCV history as float64 columns, oldest first:
// the form the indicator engines take. It is read once per price change
// and shared read-only.
type Bars marketdata.Columns

// Len returns the number of bars.
func (b Bars) Len() int { return len(b.Dates) }

// size is the memory Bars holds, for the cache's accounting.
func (b Bars) size() int { return b.Len() * (8*5 + 24) }

// The timeframes of multi-timeframe overlays.
const (
	Daily   = "1d"
	Weekly  = "1w"
	Monthly = "1M"
)

// Timeframes lists the timeframes in the order the API documents them.
var Timeframes = []string{Daily, Weekly, Monthly}

// Resample returns b in timeframe tf: daily bars as they are, or weekly
// (ISO weeks) and monthly bars made by indicators.Weekly and
// indicators.Monthly, each dated on the last trading day it holds. The
// last week or month may still be forming.
func (b Bars) Resample(tf string) (Bars, error) {
	var f func([]indicators.Bar) []indicators.Bar
	switch tf {
	case Daily:
		return b, nil
	case Weekly:
		f = indicators.Weekly
	case Monthly:
		f = indicators.Monthly
	default:
		return Bars{}, fmt.Errorf("studies: %w", &tradekit.ParamError{Param: "timeframe", Msg: "unknown timeframe " + tradekit.Quote(tf)})
	}
	daily := make([]indicators.Bar, b.Len())
	for i := range daily {
		daily[i] = indicators.Bar{Date: b.Dates[i].Time(time.UTC),
			Open: b.Open[i], High: b.High[i], Low: b.Low[i], Close: b.Close[i], Volume: b.Volume[i]}
	}
	rs := f(daily)
	out := Bars{Dates: make([]calendar.Date, len(rs))}
	out.Open, out.High, out.Low, out.Close, out.Volume = indicators.Columns(rs)
	for i, r := range rs {
		out.Dates[i] = calendar.DateOf(r.Date)
	}
	return out, nil
}

// Output is an indicator's values at the dates of its input, oldest
// first, NaN where undefined. Value is the main line: the average, RSI,
// ATR, the MACD line or the middle Bollinger band. Signal and Histogram
// are MACD's, Upper and Lower the bands'; the others are nil.
type Output struct {
	Dates                                  []calendar.Date
	Value, Signal, Histogram, Upper, Lower []float64
}

// Compute computes s over b, from b's first bar: every value depends only
// on the history up to its date, never on the range a caller asks for.
func Compute(s Spec, b Bars) Output {
	o := Output{Dates: b.Dates}
	switch s.Kind {
	case SMA:
		o.Value = indicators.SMA(b.Close, s.Period)
	case EMA:
		o.Value = indicators.EMA(b.Close, s.Period)
	case RSI:
		o.Value = indicators.RSI(b.Close, s.Period)
	case ATR:
		o.Value = indicators.ATR(b.High, b.Low, b.Close, s.Period)
	case MACD:
		o.Value, o.Signal, o.Histogram = indicators.MACD(b.Close, s.Fast, s.Slow, s.Signal)
	case BB:
		o.Upper, o.Value, o.Lower = indicators.BollingerBands(b.Close, s.Period, s.K)
	default:
		panic("studies: unknown indicator kind " + s.Kind)
	}
	return o
}

// Window returns the part of o dated from from to to, inclusive; a zero
// bound is open. The result shares o's arrays.
func (o Output) Window(from, to calendar.Date) Output {
	lo, hi := window(o.Dates, from, to)
	cut := func(x []float64) []float64 {
		if x == nil {
			return nil
		}
		return x[lo:hi]
	}
	return Output{Dates: o.Dates[lo:hi], Value: cut(o.Value), Signal: cut(o.Signal),
		Histogram: cut(o.Histogram), Upper: cut(o.Upper), Lower: cut(o.Lower)}
}

// window returns the index range [lo, hi) of dates (ascending) from from
// to to, inclusive; a zero bound is open.
func window(dates []calendar.Date, from, to calendar.Date) (lo, hi int) {
	lo, hi = 0, len(dates)
	if from.IsValid() {
		lo = sort.Search(len(dates), func(i int) bool { return !dates[i].Before(from) })
	}
	if to.IsValid() {
		hi = sort.Search(len(dates), func(i int) bool { return dates[i].After(to) })
	}
	return lo, max(lo, hi)
}

// Last returns the index of the last bar, or -1 when there is none.
func (o Output) Last() int { return len(o.Dates) - 1 }

// size is the memory o holds, for the cache's accounting.
func (o Output) size() int {
	n := 0
	for _, x := range [][]float64{o.Value, o.Signal, o.Histogram, o.Upper, o.Lower} {
		n += 8 * len(x)
	}
	return n + 24*len(o.Dates)
}

// at returns x[i], or NaN when x is nil or i is out of range.
func at(x []float64, i int) float64 {
	if i < 0 || i >= len(x) {
		return math.NaN()
	}
	return x[i]
}

// formulaSeries gives b to the formula evaluator.
func formulaSeries(b Bars) formula.Series {
	return formula.Series{Open: b.Open, High: b.High, Low: b.Low, Close: b.Close, Volume: b.Volume}
}
