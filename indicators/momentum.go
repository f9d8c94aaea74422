package indicators

import "math"

// ROC returns the rate of change of in over period values, in percent, as
// TA-Lib's ROC:
//
//	ROC[i] = (in[i]/in[i-period] - 1) * 100   (0 when in[i-period] is 0)
//
// The first period values are NaN (lookback period). ROC panics if
// period < 1.
func ROC(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	ROCInto(out, in, period)
	return out
}

// ROCInto is [ROC] writing into dst, which must have the length of in and
// must not overlap it. It allocates nothing. It panics if period < 1 or the
// lengths differ.
func ROCInto(dst, in []float64, period int) {
	checkPeriod("ROC", period, 1)
	checkLen("ROC", len(in), len(dst))
	if !warmUp(period, len(in), dst) {
		return
	}
	dst = dst[:len(in)]
	for i := period; i < len(in); i++ {
		dst[i] = rocValue(in[i], in[i-period])
	}
}

func rocValue(x, old float64) float64 {
	if old == 0 {
		return 0
	}
	return ((x / old) - 1.0) * 100.0
}

// Momentum returns the change of in over period values, as TA-Lib's MOM:
//
//	Momentum[i] = in[i] - in[i-period]
//
// The first period values are NaN (lookback period). Momentum panics if
// period < 1.
func Momentum(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	MomentumInto(out, in, period)
	return out
}

// MomentumInto is [Momentum] writing into dst, which must have the length
// of in and must not overlap it. It allocates nothing. It panics if
// period < 1 or the lengths differ.
func MomentumInto(dst, in []float64, period int) {
	checkPeriod("Momentum", period, 1)
	checkLen("Momentum", len(in), len(dst))
	if !warmUp(period, len(in), dst) {
		return
	}
	dst = dst[:len(in)]
	for i := period; i < len(in); i++ {
		dst[i] = in[i] - in[i-period]
	}
}

// lagStream keeps the last period inputs for ROC and Momentum.
type lagStream struct {
	w   window
	roc bool
}

// Next adds x and returns the indicator at it (NaN during the first period
// inputs).
func (s *lagStream) Next(x float64) float64 {
	v := s.Peek(x)
	s.w.push(x)
	return v
}

// Peek returns what Next would return for x without changing the stream.
func (s *lagStream) Peek(x float64) float64 {
	if !s.w.full() {
		return math.NaN()
	}
	if s.roc {
		return rocValue(x, s.w.oldest())
	}
	return x - s.w.oldest()
}

// ROCStream computes [ROC] one value at a time. Create it with
// [NewROCStream].
type ROCStream struct{ lagStream }

// NewROCStream returns a stream giving the same values as [ROC]. It panics
// if period < 1.
func NewROCStream(period int) *ROCStream {
	checkPeriod("ROC", period, 1)
	return &ROCStream{lagStream{w: newWindow(period), roc: true}}
}

// MomentumStream computes [Momentum] one value at a time. Create it with
// [NewMomentumStream].
type MomentumStream struct{ lagStream }

// NewMomentumStream returns a stream giving the same values as [Momentum].
// It panics if period < 1.
func NewMomentumStream(period int) *MomentumStream {
	checkPeriod("Momentum", period, 1)
	return &MomentumStream{lagStream{w: newWindow(period)}}
}
