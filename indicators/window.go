package indicators

import "math"

// Sum returns the sum of in over the last period values, as TA-Lib's SUM
// (a running sum). The first period-1 values are NaN (lookback period-1).
// Sum panics if period < 1.
func Sum(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	SumInto(out, in, period)
	return out
}

// SumInto is [Sum] writing into dst, which must have the length of in and
// must not overlap it. It allocates nothing. It panics if period < 1 or the
// lengths differ.
func SumInto(dst, in []float64, period int) {
	checkPeriod("Sum", period, 1)
	checkLen("Sum", len(in), len(dst))
	runningSum(dst, in, period, 1) // t/1 is t, bit for bit
}

// runningSum writes the sum of the last period values of in, divided by
// div, at each index: TA-Lib's running sum, shared by SUM and SMA.
func runningSum(dst, in []float64, period int, div float64) {
	lb := period - 1
	if !warmUp(lb, len(in), dst) {
		return
	}
	dst = dst[:len(in)]
	sum := 0.0
	for i := 0; i < lb; i++ {
		sum += in[i]
	}
	for i := lb; i < len(in); i++ {
		sum += in[i]
		t := sum
		sum -= in[i-lb]
		dst[i] = t / div
	}
}

// SumStream computes [Sum] one value at a time. Create it with
// [NewSumStream].
type SumStream struct {
	w   window // the last period-1 inputs
	sum float64
}

// NewSumStream returns a stream giving the same values as [Sum]. It panics
// if period < 1.
func NewSumStream(period int) *SumStream {
	checkPeriod("Sum", period, 1)
	return &SumStream{w: newWindow(period - 1)}
}

// Next adds x and returns the sum of the last period inputs (NaN during the
// first period-1 inputs).
func (s *SumStream) Next(x float64) float64 { return s.update(x, true) }

// Peek returns what [SumStream.Next] would return for x without changing
// the stream.
func (s *SumStream) Peek(x float64) float64 { return s.update(x, false) }

func (s *SumStream) update(x float64, commit bool) float64 {
	if !s.w.full() {
		if commit {
			s.sum += x
			s.w.push(x)
		}
		return math.NaN()
	}
	t := s.sum + x
	if commit {
		old := x
		if len(s.w.buf) > 0 {
			old = s.w.oldest()
		}
		s.sum = t - old
		s.w.push(x)
	}
	return t
}

// Highest returns the largest of the last period values of in at each
// index, as TA-Lib's MAX. The first period-1 values are NaN (lookback
// period-1). Highest panics if period < 1.
func Highest(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	HighestInto(out, in, period)
	return out
}

// HighestInto is [Highest] writing into dst, which must have the length of
// in and must not overlap it. It allocates nothing. It panics if period < 1
// or the lengths differ.
func HighestInto(dst, in []float64, period int) {
	checkPeriod("Highest", period, 1)
	checkLen("Highest", len(in), len(dst))
	extremeInto(dst, in, period, true)
}

// Lowest returns the smallest of the last period values of in at each
// index, as TA-Lib's MIN. The first period-1 values are NaN (lookback
// period-1). Lowest panics if period < 1.
func Lowest(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	LowestInto(out, in, period)
	return out
}

// LowestInto is [Lowest] writing into dst, which must have the length of in
// and must not overlap it. It allocates nothing. It panics if period < 1 or
// the lengths differ.
func LowestInto(dst, in []float64, period int) {
	checkPeriod("Lowest", period, 1)
	checkLen("Lowest", len(in), len(dst))
	extremeInto(dst, in, period, false)
}

// extremeInto tracks the index of the window's extreme and rescans the
// window only when that index leaves it (TA-Lib's MAX/MIN method).
func extremeInto(dst, in []float64, period int, max bool) {
	lb := period - 1
	if !warmUp(lb, len(in), dst) {
		return
	}
	if max {
		highestFrom(dst[:len(in)], in, lb)
	} else {
		lowestFrom(dst[:len(in)], in, lb)
	}
}

func highestFrom(dst, in []float64, lb int) {
	best, bestIdx := 0.0, -1
	for i := lb; i < len(in); i++ {
		start := i - lb
		if x := in[i]; bestIdx < start {
			bestIdx, best = start, in[start]
			for j := start + 1; j <= i; j++ {
				if v := in[j]; v >= best {
					best, bestIdx = v, j
				}
			}
		} else if x >= best {
			best, bestIdx = x, i
		}
		dst[i] = best
	}
}

func lowestFrom(dst, in []float64, lb int) {
	best, bestIdx := 0.0, -1
	for i := lb; i < len(in); i++ {
		start := i - lb
		if x := in[i]; bestIdx < start {
			bestIdx, best = start, in[start]
			for j := start + 1; j <= i; j++ {
				if v := in[j]; v <= best {
					best, bestIdx = v, j
				}
			}
		} else if x <= best {
			best, bestIdx = x, i
		}
		dst[i] = best
	}
}

// HighestStream computes [Highest] one value at a time, in O(period) per
// value. Create it with [NewHighestStream].
type HighestStream struct{ extremeStream }

// NewHighestStream returns a stream giving the same values as [Highest]. It
// panics if period < 1.
func NewHighestStream(period int) *HighestStream {
	checkPeriod("Highest", period, 1)
	return &HighestStream{extremeStream{w: newWindow(period - 1), max: true}}
}

// LowestStream computes [Lowest] one value at a time, in O(period) per
// value. Create it with [NewLowestStream].
type LowestStream struct{ extremeStream }

// NewLowestStream returns a stream giving the same values as [Lowest]. It
// panics if period < 1.
func NewLowestStream(period int) *LowestStream {
	checkPeriod("Lowest", period, 1)
	return &LowestStream{extremeStream{w: newWindow(period - 1)}}
}

type extremeStream struct {
	w   window // the last period-1 inputs
	max bool
}

// Next adds x and returns the extreme of the last period inputs (NaN
// during the first period-1 inputs).
func (s *extremeStream) Next(x float64) float64 {
	v := s.Peek(x)
	s.w.push(x)
	return v
}

// Peek returns what Next would return for x without changing the stream.
func (s *extremeStream) Peek(x float64) float64 {
	if !s.w.full() {
		return math.NaN()
	}
	best := x
	for _, v := range s.w.buf {
		if (s.max && v > best) || (!s.max && v < best) {
			best = v
		}
	}
	return best
}

// StdDev returns the population standard deviation of in over the last
// period values, times nbDev, as TA-Lib's STDDEV:
//
//	var = mean(in²) - mean(in)²   (running sums; below 1e-14 counts as 0)
//	StdDev = sqrt(var) * nbDev
//
// The first period-1 values are NaN (lookback period-1). StdDev panics if
// period < 1.
func StdDev(in []float64, period int, nbDev float64) []float64 {
	out := make([]float64, len(in))
	StdDevInto(out, in, period, nbDev)
	return out
}

// StdDevInto is [StdDev] writing into dst, which must have the length of
// in and must not overlap it. It allocates nothing. It panics if period < 1
// or the lengths differ.
func StdDevInto(dst, in []float64, period int, nbDev float64) {
	checkPeriod("StdDev", period, 1)
	checkLen("StdDev", len(in), len(dst))
	lb := period - 1
	if !warmUp(lb, len(in), dst) {
		return
	}
	dst = dst[:len(in)]
	var s1, s2 float64
	for i := 0; i < lb; i++ {
		x := in[i]
		s1 += x
		s2 += x * x
	}
	p := float64(period)
	for i := lb; i < len(in); i++ {
		x := in[i]
		s1 += x
		s2 += x * x
		m1 := s1 / p
		m2 := s2 / p
		old := in[i-lb]
		s1 -= old
		s2 -= old * old
		dst[i] = m2 - m1*m1
	}
	for i := lb; i < len(dst); i++ { // a second pass keeps the sums' loop short
		dst[i] = stdDevValue(dst[i], nbDev)
	}
}

func stdDevValue(v, nbDev float64) float64 {
	if v < taEpsilon {
		return 0
	}
	return math.Sqrt(v) * nbDev
}

// StdDevStream computes [StdDev] one value at a time. Create it with
// [NewStdDevStream].
type StdDevStream struct {
	period int
	nbDev  float64
	w      window // the last period-1 inputs
	s1, s2 float64
}

// NewStdDevStream returns a stream giving the same values as [StdDev]. It
// panics if period < 1.
func NewStdDevStream(period int, nbDev float64) *StdDevStream {
	checkPeriod("StdDev", period, 1)
	return &StdDevStream{period: period, nbDev: nbDev, w: newWindow(period - 1)}
}

// Next adds x and returns the standard deviation of the last period inputs
// times nbDev (NaN during the first period-1 inputs).
func (s *StdDevStream) Next(x float64) float64 { return s.update(x, true) }

// Peek returns what [StdDevStream.Next] would return for x without changing
// the stream.
func (s *StdDevStream) Peek(x float64) float64 { return s.update(x, false) }

func (s *StdDevStream) update(x float64, commit bool) float64 {
	if !s.w.full() {
		if commit {
			s.s1 += x
			s.s2 += x * x
			s.w.push(x)
		}
		return math.NaN()
	}
	p := float64(s.period)
	s1 := s.s1 + x
	s2 := s.s2 + x*x
	m1 := s1 / p
	m2 := s2 / p
	if commit {
		old := x
		if len(s.w.buf) > 0 {
			old = s.w.oldest()
		}
		s.s1 = s1 - old
		s.s2 = s2 - old*old
		s.w.push(x)
	}
	return stdDevValue(m2-m1*m1, s.nbDev)
}
