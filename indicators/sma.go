package indicators

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
	runningSum(dst, in, period, float64(period))
}

// SMAStream computes [SMA] one value at a time. Create it with
// [NewSMAStream]; the zero value is not usable.
type SMAStream struct {
	sum SumStream
	p   float64
}

// NewSMAStream returns a stream giving the same values as [SMA] with the
// same period. It panics if period < 1.
func NewSMAStream(period int) *SMAStream {
	checkPeriod("SMA", period, 1)
	return &SMAStream{sum: SumStream{w: newWindow(period - 1)}, p: float64(period)}
}

// Next adds x as the next input and returns the SMA at it (NaN during the
// first period-1 inputs).
func (s *SMAStream) Next(x float64) float64 { return s.sum.Next(x) / s.p }

// Peek returns what [SMAStream.Next] would return for x without changing
// the stream, for a bar that is still forming.
func (s *SMAStream) Peek(x float64) float64 { return s.sum.Peek(x) / s.p }
