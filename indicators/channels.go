package indicators

import "math"

// Donchian returns Donchian channels over period bars:
//
//	upper = highest high,  lower = lowest low,  middle = (upper + lower) / 2
//
// The first period-1 values are NaN (lookback period-1). Donchian panics if
// period < 1 or the inputs differ in length.
func Donchian(high, low []float64, period int) (upper, middle, lower []float64) {
	checkPeriod("Donchian", period, 1)
	checkLen("Donchian", len(high), len(low))
	upper, lower = Highest(high, period), Lowest(low, period)
	middle = make([]float64, len(high))
	for i := range middle {
		middle[i] = (upper[i] + lower[i]) / 2
	}
	return upper, middle, lower
}

// DonchianStream computes [Donchian] one bar at a time, in O(period) per
// bar. Create it with [NewDonchianStream].
type DonchianStream struct{ r rangeWindow }

// NewDonchianStream returns a stream giving the same values as [Donchian].
// It panics if period < 1.
func NewDonchianStream(period int) *DonchianStream {
	checkPeriod("Donchian", period, 1)
	return &DonchianStream{r: newRangeWindow(period)}
}

// Next adds a bar and returns the channel at it (NaN during the first
// period-1 bars).
func (s *DonchianStream) Next(high, low float64) (upper, middle, lower float64) {
	upper, middle, lower = s.Peek(high, low)
	s.r.push(high, low)
	return upper, middle, lower
}

// Peek returns what [DonchianStream.Next] would return for the bar without
// changing the stream.
func (s *DonchianStream) Peek(high, low float64) (upper, middle, lower float64) {
	hh, ll, ok := s.r.extremes(high, low)
	if !ok {
		nan := math.NaN()
		return nan, nan, nan
	}
	return hh, (hh + ll) / 2, ll
}

// Keltner returns Keltner channels in their modern form (Raschke):
//
//	middle = EMA(close, period)
//	upper  = middle + mult * ATR(period),  lower = middle - mult * ATR(period)
//
// with [EMA] and [ATR] as TA-Lib computes them (EMA seeded with the mean,
// ATR with Wilder smoothing). Common settings are period 20, mult 2. All
// three outputs start at index period (ATR's lookback; EMA's is period-1)
// and are NaN before it. Keltner panics if period < 1 or the inputs differ
// in length.
func Keltner(high, low, close []float64, period int, mult float64) (upper, middle, lower []float64) {
	checkPeriod("Keltner", period, 1)
	n := len(close)
	checkLen("Keltner", n, len(high), len(low))
	middle = EMA(close, period)
	atr := ATR(high, low, close, period)
	upper, lower = atr, make([]float64, n) // atr's storage becomes upper
	nan := math.NaN()
	for i := range close {
		if math.IsNaN(atr[i]) {
			middle[i], upper[i], lower[i] = nan, nan, nan
			continue
		}
		d := mult * atr[i]
		upper[i], lower[i] = middle[i]+d, middle[i]-d
	}
	return upper, middle, lower
}

// KeltnerStream computes [Keltner] one bar at a time. Create it with
// [NewKeltnerStream].
type KeltnerStream struct {
	ema  EMAStream
	atr  ATRStream
	mult float64
}

// NewKeltnerStream returns a stream giving the same values as [Keltner].
// It panics if period < 1.
func NewKeltnerStream(period int, mult float64) *KeltnerStream {
	checkPeriod("Keltner", period, 1)
	return &KeltnerStream{ema: *NewEMAStream(period), atr: *NewATRStream(period), mult: mult}
}

// Next adds a bar and returns the channel at it (NaN during the first
// period bars).
func (s *KeltnerStream) Next(high, low, close float64) (upper, middle, lower float64) {
	return keltnerValue(s.ema.Next(close), s.atr.Next(high, low, close), s.mult)
}

// Peek returns what [KeltnerStream.Next] would return for the bar without
// changing the stream.
func (s *KeltnerStream) Peek(high, low, close float64) (upper, middle, lower float64) {
	return keltnerValue(s.ema.Peek(close), s.atr.Peek(high, low, close), s.mult)
}

func keltnerValue(mid, atr, mult float64) (upper, middle, lower float64) {
	if math.IsNaN(atr) || math.IsNaN(mid) {
		nan := math.NaN()
		return nan, nan, nan
	}
	d := mult * atr
	return mid + d, mid, mid - d
}
