package indicators

import "math"

// RSI returns Wilder's relative strength index of in, as TA-Lib's RSI with
// its default unstable period of 0:
//
//	d[i]     = in[i] - in[i-1]
//	gain[p]  = (sum of d>0 over d[1..p]) / p,  loss[p] likewise with -d for d<0
//	gain[i]  = (gain[i-1]*(p-1) + max(d[i],0)) / p   (Wilder smoothing; loss alike)
//	RSI[i]   = 100 * gain[i] / (gain[i] + loss[i])   (0 when the sum is below 1e-14)
//
// The first period values are NaN (lookback period). RSI panics if
// period < 2.
func RSI(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	RSIInto(out, in, period)
	return out
}

// RSIInto is [RSI] writing into dst, which must have the length of in. dst
// may be in itself. It allocates nothing. RSIInto panics if period < 2 or
// len(dst) != len(in).
func RSIInto(dst, in []float64, period int) {
	checkPeriod("RSI", period, 2)
	checkLen("RSI", len(in), len(dst))
	if period >= len(in) {
		fillNaN(dst)
		return
	}
	dst = dst[:len(in)]
	p := float64(period)
	pm1 := float64(period - 1)
	var gain, loss float64
	prev := in[0]
	for i := 1; i <= period; i++ {
		x := in[i]
		gain, loss = addChange(gain, loss, x-prev)
		prev = x
	}
	loss /= p
	gain /= p
	fillNaN(dst[:period])
	dst[period] = rsiValue(gain, loss)
	for i := period + 1; i < len(in); i++ {
		x := in[i]
		gain, loss = wilder(gain, loss, x-prev, pm1, p)
		prev = x
		dst[i] = rsiValue(gain, loss)
	}
}

// addChange adds the change d to the gains when it is positive, to the
// losses (as a positive number) otherwise.
func addChange(gain, loss, d float64) (float64, float64) {
	if d < 0 {
		return gain, loss - d
	}
	return gain + d, loss
}

// wilder is one step of Wilder's smoothing of the average gain and loss
// with the change d: avg = (avg·(period-1) + new) / period, pm1 and p being
// period-1 and period.
func wilder(gain, loss, d, pm1, p float64) (float64, float64) {
	gain, loss = addChange(gain*pm1, loss*pm1, d)
	return gain / p, loss / p
}

func rsiValue(gain, loss float64) float64 {
	t := gain + loss
	if isZero(t) {
		return 0
	}
	return 100 * (gain / t)
}

// RSIStream computes [RSI] one value at a time. Create it with
// [NewRSIStream].
type RSIStream struct {
	period     int
	n          int // inputs seen, capped at period+1
	prev       float64
	gain, loss float64
}

// NewRSIStream returns a stream giving the same values as [RSI] with the
// same period. It panics if period < 2.
func NewRSIStream(period int) *RSIStream {
	checkPeriod("RSI", period, 2)
	return &RSIStream{period: period}
}

// Next adds x as the next input and returns the RSI at it (NaN during the
// first period inputs).
func (s *RSIStream) Next(x float64) float64 { return s.update(x, true) }

// Peek returns what [RSIStream.Next] would return for x without changing
// the stream.
func (s *RSIStream) Peek(x float64) float64 { return s.update(x, false) }

func (s *RSIStream) update(x float64, commit bool) float64 {
	if s.n == 0 {
		if commit {
			s.prev = x
			s.n = 1
		}
		return math.NaN()
	}
	gain, loss := s.gain, s.loss
	d := x - s.prev
	v := math.NaN()
	p := float64(s.period)
	if s.n <= s.period {
		gain, loss = addChange(gain, loss, d)
		if s.n == s.period {
			loss /= p
			gain /= p
			v = rsiValue(gain, loss)
		}
	} else {
		gain, loss = wilder(gain, loss, d, float64(s.period-1), p)
		v = rsiValue(gain, loss)
	}
	if commit {
		s.prev = x
		s.gain, s.loss = gain, loss
		if s.n <= s.period {
			s.n++
		}
	}
	return v
}
