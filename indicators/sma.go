package indicators

import "math"

// SMA returns the simple moving average of in over period values:
//
//	SMA[i] = (in[i-period+1] + … + in[i]) / period
//
// as TA-Lib's SMA computes it (a running sum). The first period-1 values
// are NaN (lookback period-1). SMA panics if period < 1.
func SMA(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	SMAInto(out, in, period)
	return out
}

// SMAInto is [SMA] writing into dst, which must have the length of in and
// must not overlap it. It allocates nothing. SMAInto panics if period < 1 or
// len(dst) != len(in).
func SMAInto(dst, in []float64, period int) {
	checkPeriod("SMA", period, 1)
	checkLen("SMA", len(in), len(dst))
	lb := period - 1
	if lb >= len(in) {
		fillNaN(dst)
		return
	}
	fillNaN(dst[:lb])
	dst = dst[:len(in)]
	sum := 0.0
	for i := 0; i < lb; i++ {
		sum += in[i]
	}
	p := float64(period)
	for i := lb; i < len(in); i++ {
		sum += in[i]
		t := sum
		sum -= in[i-lb]
		dst[i] = t / p
	}
}

// SMAStream computes [SMA] one value at a time. Create it with
// [NewSMAStream]; the zero value is not usable.
type SMAStream struct {
	period int
	ring   []float64 // the last period-1 inputs
	pos    int       // next slot of ring to overwrite (the oldest input)
	n      int       // inputs seen, capped at period-1
	sum    float64   // sum of the inputs held in ring
}

// NewSMAStream returns a stream giving the same values as [SMA] with the
// same period. It panics if period < 1.
func NewSMAStream(period int) *SMAStream {
	checkPeriod("SMA", period, 1)
	return &SMAStream{period: period, ring: make([]float64, period-1)}
}

// Next adds x as the next input and returns the SMA at it (NaN during the
// first period-1 inputs).
func (s *SMAStream) Next(x float64) float64 { return s.update(x, true) }

// Peek returns what [SMAStream.Next] would return for x without changing
// the stream, for a bar that is still forming.
func (s *SMAStream) Peek(x float64) float64 { return s.update(x, false) }

func (s *SMAStream) update(x float64, commit bool) float64 {
	lb := s.period - 1
	if s.n < lb {
		if commit {
			s.sum += x
			s.ring[s.n] = x
			s.n++
		}
		return math.NaN()
	}
	t := s.sum + x
	if lb == 0 {
		if commit {
			s.sum = t - x
		}
		return t / float64(s.period)
	}
	if commit {
		s.sum = t - s.ring[s.pos]
		s.ring[s.pos] = x
		s.pos++
		if s.pos == lb {
			s.pos = 0
		}
	}
	return t / float64(s.period)
}
