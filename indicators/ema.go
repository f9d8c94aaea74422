package indicators

import "math"

// EMA returns the exponential moving average of in, as TA-Lib's EMA:
//
//	k = 2 / (period + 1)
//	EMA[period-1] = (in[0] + … + in[period-1]) / period   (the seed)
//	EMA[i] = (in[i] - EMA[i-1]) * k + EMA[i-1]
//
// The first period-1 values are NaN (lookback period-1). EMA panics if
// period < 1.
func EMA(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	EMAInto(out, in, period)
	return out
}

// EMAInto is [EMA] writing into dst, which must have the length of in. dst
// may be in itself. It allocates nothing. EMAInto panics if period < 1 or
// len(dst) != len(in).
func EMAInto(dst, in []float64, period int) {
	checkPeriod("EMA", period, 1)
	checkLen("EMA", len(in), len(dst))
	emaInto(dst, in, period, 0)
}

// emaInto writes the EMA of in[start:] into dst[start:], NaN before
// start+period-1; dst[:start] is left alone. dst may be in.
func emaInto(dst, in []float64, period, start int) {
	lb := start + period - 1
	if lb >= len(in) {
		fillNaN(dst[start:])
		return
	}
	sum := 0.0
	for i := start; i <= lb; i++ {
		sum += in[i]
	}
	fillNaN(dst[start:lb])
	dst = dst[:len(in)]
	k := perToK(period)
	prev := sum / float64(period)
	dst[lb] = prev
	for i := lb + 1; i < len(in); i++ {
		prev = (in[i]-prev)*k + prev
		dst[i] = prev
	}
}

// EMAStream computes [EMA] one value at a time. Create it with
// [NewEMAStream].
type EMAStream struct {
	period int
	k      float64
	n      int     // inputs seen, capped at period
	sum    float64 // seed sum during the warm-up
	prev   float64 // last EMA once n == period
}

// NewEMAStream returns a stream giving the same values as [EMA] with the
// same period. It panics if period < 1.
func NewEMAStream(period int) *EMAStream {
	checkPeriod("EMA", period, 1)
	return &EMAStream{period: period, k: perToK(period)}
}

// Next adds x as the next input and returns the EMA at it (NaN during the
// first period-1 inputs).
func (s *EMAStream) Next(x float64) float64 { return s.update(x, true) }

// Peek returns what [EMAStream.Next] would return for x without changing
// the stream.
func (s *EMAStream) Peek(x float64) float64 { return s.update(x, false) }

// Value returns the last EMA given by Next, NaN during the warm-up.
func (s *EMAStream) Value() float64 {
	if s.n < s.period {
		return math.NaN()
	}
	return s.prev
}

func (s *EMAStream) update(x float64, commit bool) float64 {
	if s.n < s.period {
		sum := s.sum + x
		v := math.NaN()
		if s.n == s.period-1 {
			v = sum / float64(s.period)
		}
		if commit {
			s.sum = sum
			s.n++
			s.prev = v
		}
		return v
	}
	v := (x-s.prev)*s.k + s.prev
	if commit {
		s.prev = v
	}
	return v
}
