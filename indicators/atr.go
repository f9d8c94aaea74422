package indicators

import "math"

// trueRange is TA-Lib's TRANGE for one bar given the previous close:
// the greatest of high-low, |prevClose-high| and |low-prevClose|.
func trueRange(high, low, prevClose float64) float64 {
	g := high - low
	if v := math.Abs(prevClose - high); v > g {
		g = v
	}
	if v := math.Abs(low - prevClose); v > g {
		g = v
	}
	return g
}

// ATR returns Wilder's average true range, as TA-Lib's ATR:
//
//	TR[i]  = max(high[i]-low[i], |high[i]-close[i-1]|, |low[i]-close[i-1]|)   (i >= 1)
//	ATR[p] = (TR[1] + … + TR[p]) / p
//	ATR[i] = (ATR[i-1]*(p-1) + TR[i]) / p
//
// With period 1, ATR is the true range. The first period values are NaN
// (lookback period). ATR panics if period < 1 or the inputs differ in
// length.
func ATR(high, low, close []float64, period int) []float64 {
	out := make([]float64, len(close))
	ATRInto(out, high, low, close, period)
	return out
}

// ATRInto is [ATR] writing into dst, which must have the length of the
// inputs and must not overlap close. It allocates nothing. ATRInto panics
// if period < 1 or the lengths differ.
func ATRInto(dst, high, low, close []float64, period int) {
	checkPeriod("ATR", period, 1)
	n := len(close)
	checkLen("ATR", n, len(high), len(low), len(dst))
	if !warmUp(period, n, dst) {
		return
	}
	high, low, dst = high[:n], low[:n], dst[:n]
	if period == 1 {
		for i := 1; i < n; i++ {
			dst[i] = trueRange(high[i], low[i], close[i-1])
		}
		return
	}
	p := float64(period)
	pm1 := float64(period - 1)
	sum := 0.0
	for i := 1; i <= period; i++ {
		sum += trueRange(high[i], low[i], close[i-1])
	}
	prev := sum / p
	dst[period] = prev
	for i := period + 1; i < n; i++ {
		prev *= pm1
		prev += trueRange(high[i], low[i], close[i-1])
		prev /= p
		dst[i] = prev
	}
}

// ATRStream computes [ATR] one bar at a time. Create it with
// [NewATRStream].
type ATRStream struct {
	period    int
	n         int // bars seen, capped at period+1
	prevClose float64
	atr       float64 // the running sum of TR during the warm-up, then the ATR
}

// NewATRStream returns a stream giving the same values as [ATR] with the
// same period. It panics if period < 1.
func NewATRStream(period int) *ATRStream {
	checkPeriod("ATR", period, 1)
	return &ATRStream{period: period}
}

// Next adds a bar and returns the ATR at it (NaN during the first period
// bars).
func (s *ATRStream) Next(high, low, close float64) float64 {
	return s.update(high, low, close, true)
}

// Peek returns what [ATRStream.Next] would return for the bar without
// changing the stream.
func (s *ATRStream) Peek(high, low, close float64) float64 {
	return s.update(high, low, close, false)
}

func (s *ATRStream) update(high, low, close float64, commit bool) float64 {
	if s.n == 0 {
		if commit {
			s.prevClose = close
			s.n = 1
		}
		return math.NaN()
	}
	tr := trueRange(high, low, s.prevClose)
	atr := s.atr
	v := math.NaN()
	switch {
	case s.period == 1:
		v = tr
	case s.n < s.period:
		atr += tr
	case s.n == s.period:
		atr = (atr + tr) / float64(s.period)
		v = atr
	default:
		atr *= float64(s.period - 1)
		atr += tr
		atr /= float64(s.period)
		v = atr
	}
	if commit {
		s.prevClose = close
		s.atr = atr
		if s.n <= s.period {
			s.n++
		}
	}
	return v
}
