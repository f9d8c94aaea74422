package studies

import (
	"math"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/indicators"
	"github.com/tradekit/tradekit/ohlcv"
)

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
func Compute(s Spec, b ohlcv.Series) Output {
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
	lo, hi := ohlcv.Between(o.Dates, from, to)
	cut := func(x []float64) []float64 {
		if x == nil {
			return nil
		}
		return x[lo:hi]
	}
	return Output{Dates: o.Dates[lo:hi], Value: cut(o.Value), Signal: cut(o.Signal),
		Histogram: cut(o.Histogram), Upper: cut(o.Upper), Lower: cut(o.Lower)}
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
