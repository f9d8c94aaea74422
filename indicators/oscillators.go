package indicators

import "math"

// rangeWindow tracks the highest high and lowest low of the last period
// bars (period-1 held plus the current one).
type rangeWindow struct {
	hi, lo window // the last period-1 highs and lows
}

func newRangeWindow(period int) rangeWindow {
	return rangeWindow{hi: newWindow(period - 1), lo: newWindow(period - 1)}
}

// extremes returns the highest high and lowest low over the held bars
// and the bar (high, low), and whether the window is full.
func (r *rangeWindow) extremes(high, low float64) (hh, ll float64, ok bool) {
	if !r.hi.full() {
		return 0, 0, false
	}
	hh, ll = high, low
	for _, v := range r.hi.buf {
		if v > hh {
			hh = v
		}
	}
	for _, v := range r.lo.buf {
		if v < ll {
			ll = v
		}
	}
	return hh, ll, true
}

func (r *rangeWindow) push(high, low float64) {
	r.hi.push(high)
	r.lo.push(low)
}

// Stochastic returns the slow stochastic oscillator, as TA-Lib's STOCH
// with simple moving averages for both smoothings:
//
//	fastK = 100 * (close - LL) / (HH - LL)   over fastK bars (0 when HH == LL)
//	k     = SMA(fastK, slowK)
//	d     = SMA(k, slowD)
//
// where HH and LL are the highest high and lowest low. Both outputs start
// at the lookback (fastK-1) + (slowK-1) + (slowD-1) and are NaN before it.
// TA-Lib's defaults are 5, 3, 3; 14, 3, 3 is also common. Stochastic
// panics if a period is < 1 or the inputs differ in length.
func Stochastic(high, low, close []float64, fastK, slowK, slowD int) (k, d []float64) {
	n := len(close)
	checkLen("Stochastic", n, len(high), len(low))
	s := NewStochasticStream(fastK, slowK, slowD)
	k, d = make([]float64, n), make([]float64, n)
	for i := range close {
		k[i], d[i] = s.Next(high[i], low[i], close[i])
	}
	return k, d
}

// StochasticStream computes [Stochastic] one bar at a time. Create it with
// [NewStochasticStream].
type StochasticStream struct {
	r     rangeWindow
	slowK *SMAStream // smooths fast %K into %K
	slowD *SMAStream // smooths %K into %D
}

// NewStochasticStream returns a stream giving the same values as
// [Stochastic]. It panics if a period is < 1.
func NewStochasticStream(fastK, slowK, slowD int) *StochasticStream {
	checkPeriod("Stochastic fastK", fastK, 1)
	checkPeriod("Stochastic slowK", slowK, 1)
	checkPeriod("Stochastic slowD", slowD, 1)
	return &StochasticStream{
		r:     newRangeWindow(fastK),
		slowK: NewSMAStream(slowK), slowD: NewSMAStream(slowD),
	}
}

// Next adds a bar and returns %K and %D at it (NaN during the warm-up).
func (s *StochasticStream) Next(high, low, close float64) (k, d float64) {
	return s.update(high, low, close, true)
}

// Peek returns what [StochasticStream.Next] would return for the bar
// without changing the stream.
func (s *StochasticStream) Peek(high, low, close float64) (k, d float64) {
	return s.update(high, low, close, false)
}

func (s *StochasticStream) update(high, low, close float64, commit bool) (k, d float64) {
	nan := math.NaN()
	hh, ll, ok := s.r.extremes(high, low)
	if commit {
		s.r.push(high, low)
	}
	if !ok {
		return nan, nan
	}
	fk := 0.0
	if diff := (hh - ll) / 100.0; diff != 0 {
		fk = (close - ll) / diff
	}
	var sk, sd float64
	if commit {
		sk = s.slowK.Next(fk)
		if !math.IsNaN(sk) {
			sd = s.slowD.Next(sk)
		}
	} else {
		sk = s.slowK.Peek(fk)
		if !math.IsNaN(sk) {
			sd = s.slowD.Peek(sk)
		}
	}
	if math.IsNaN(sk) || math.IsNaN(sd) {
		return nan, nan
	}
	return sk, sd
}

// WilliamsR returns Williams' %R, as TA-Lib's WILLR:
//
//	%R = -100 * (HH - close) / (HH - LL)   over period bars (0 when HH == LL)
//
// The first period-1 values are NaN (lookback period-1). WilliamsR panics
// if period < 1 or the inputs differ in length.
func WilliamsR(high, low, close []float64, period int) []float64 {
	n := len(close)
	checkLen("WilliamsR", n, len(high), len(low))
	s := NewWilliamsRStream(period)
	out := make([]float64, n)
	for i := range close {
		out[i] = s.Next(high[i], low[i], close[i])
	}
	return out
}

// WilliamsRStream computes [WilliamsR] one bar at a time. Create it with
// [NewWilliamsRStream].
type WilliamsRStream struct{ r rangeWindow }

// NewWilliamsRStream returns a stream giving the same values as
// [WilliamsR]. It panics if period < 1.
func NewWilliamsRStream(period int) *WilliamsRStream {
	checkPeriod("WilliamsR", period, 1)
	return &WilliamsRStream{r: newRangeWindow(period)}
}

// Next adds a bar and returns %R at it (NaN during the first period-1
// bars).
func (s *WilliamsRStream) Next(high, low, close float64) float64 {
	v := s.Peek(high, low, close)
	s.r.push(high, low)
	return v
}

// Peek returns what [WilliamsRStream.Next] would return for the bar
// without changing the stream.
func (s *WilliamsRStream) Peek(high, low, close float64) float64 {
	hh, ll, ok := s.r.extremes(high, low)
	if !ok {
		return math.NaN()
	}
	if diff := (hh - ll) / (-100.0); diff != 0 {
		return (hh - close) / diff
	}
	return 0
}

// CCI returns the commodity channel index, as TA-Lib's CCI:
//
//	tp  = (high + low + close) / 3
//	CCI = (tp - SMA(tp)) / (0.015 * meanAbsDev(tp))   over period bars
//
// (0 when either part is 0). The first period-1 values are NaN (lookback
// period-1). CCI panics if period < 1 or the inputs differ in length.
func CCI(high, low, close []float64, period int) []float64 {
	n := len(close)
	checkLen("CCI", n, len(high), len(low))
	s := NewCCIStream(period)
	out := make([]float64, n)
	for i := range close {
		out[i] = s.Next(high[i], low[i], close[i])
	}
	return out
}

// CCIStream computes [CCI] one bar at a time, in O(period) per bar. Create
// it with [NewCCIStream].
type CCIStream struct {
	buf []float64 // typical prices; bar i goes to slot i%period, as in TA-Lib
	idx int       // slot of the next bar
	n   int       // bars seen, capped at period
}

// NewCCIStream returns a stream giving the same values as [CCI]. It panics
// if period < 1.
func NewCCIStream(period int) *CCIStream {
	checkPeriod("CCI", period, 1)
	return &CCIStream{buf: make([]float64, period)}
}

// Next adds a bar and returns the CCI at it (NaN during the first period-1
// bars).
func (s *CCIStream) Next(high, low, close float64) float64 {
	return s.update(high, low, close, true)
}

// Peek returns what [CCIStream.Next] would return for the bar without
// changing the stream.
func (s *CCIStream) Peek(high, low, close float64) float64 {
	return s.update(high, low, close, false)
}

func (s *CCIStream) update(high, low, close float64, commit bool) float64 {
	p := len(s.buf)
	tp := (high + low + close) / 3
	saved := s.buf[s.idx]
	s.buf[s.idx] = tp
	v := math.NaN()
	if s.n >= p-1 {
		avg := 0.0
		for _, x := range s.buf {
			avg += x
		}
		avg /= float64(p)
		dev := 0.0
		for _, x := range s.buf {
			dev += math.Abs(x - avg)
		}
		v = 0
		if d := tp - avg; d != 0 && dev != 0 {
			v = d / (0.015 * (dev / float64(p)))
		}
	}
	if !commit {
		s.buf[s.idx] = saved
		return v
	}
	s.idx++
	if s.idx == p {
		s.idx = 0
	}
	if s.n < p {
		s.n++
	}
	return v
}
