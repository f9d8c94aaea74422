package indicators

import "math"

// WMA returns the linearly weighted moving average of in, as TA-Lib's WMA:
//
//	WMA[i] = (1*in[i-p+1] + 2*in[i-p+2] + … + p*in[i]) / (p*(p+1)/2)
//
// computed with TA-Lib's running weighted sum. The first period-1 values
// are NaN (lookback period-1); with period 1, WMA is in. WMA panics if
// period < 1.
func WMA(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	WMAInto(out, in, period)
	return out
}

// WMAInto is [WMA] writing into dst, which must have the length of in and
// must not overlap it. It allocates nothing. It panics if period < 1 or the
// lengths differ.
func WMAInto(dst, in []float64, period int) {
	checkPeriod("WMA", period, 1)
	checkLen("WMA", len(in), len(dst))
	lb := period - 1
	if !warmUp(lb, len(in), dst) {
		return
	}
	if period == 1 {
		copy(dst, in)
		return
	}
	dst = dst[:len(in)]
	var sum, sub float64
	for i := 0; i < lb; i++ {
		x := in[i]
		sub += x
		sum += x * float64(i+1)
	}
	p := float64(period)
	div := float64(period * (period + 1) / 2)
	trailing := 0.0
	for i := lb; i < len(in); i++ {
		x := in[i]
		sub += x
		sub -= trailing
		sum += x * p
		trailing = in[i-lb]
		dst[i] = sum / div
		sum -= sub
	}
}

// WMAStream computes [WMA] one value at a time. Create it with
// [NewWMAStream].
type WMAStream struct {
	period        int
	w             window // the last period-1 inputs
	sum, sub, trl float64
}

// NewWMAStream returns a stream giving the same values as [WMA]. It panics
// if period < 1.
func NewWMAStream(period int) *WMAStream {
	checkPeriod("WMA", period, 1)
	return &WMAStream{period: period, w: newWindow(period - 1)}
}

// Next adds x and returns the WMA at it (NaN during the first period-1
// inputs).
func (s *WMAStream) Next(x float64) float64 { return s.update(x, true) }

// Peek returns what [WMAStream.Next] would return for x without changing
// the stream.
func (s *WMAStream) Peek(x float64) float64 { return s.update(x, false) }

func (s *WMAStream) update(x float64, commit bool) float64 {
	if s.period == 1 {
		return x
	}
	if !s.w.full() {
		if commit {
			s.sub += x
			s.sum += x * float64(s.w.n+1)
			s.w.push(x)
		}
		return math.NaN()
	}
	sub := s.sub + x
	sub -= s.trl
	sum := s.sum + x*float64(s.period)
	v := sum / float64(s.period*(s.period+1)/2)
	if commit {
		s.trl = s.w.oldest()
		s.sub = sub
		s.sum = sum - sub
		s.w.push(x)
	}
	return v
}

// DEMA returns the double exponential moving average of in, as TA-Lib's
// DEMA:
//
//	e1 = EMA(in, p),  e2 = EMA(e1, p)   (each seeded with the mean of its first p inputs)
//	DEMA = 2*e1 - e2
//
// The first 2*(period-1) values are NaN (lookback 2*(period-1)). DEMA
// panics if period < 1.
func DEMA(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	DEMAInto(out, in, period)
	return out
}

// DEMAInto is [DEMA] writing into dst, which must have the length of in.
// dst may be in itself. It allocates nothing. It panics if period < 1 or
// the lengths differ.
func DEMAInto(dst, in []float64, period int) {
	checkPeriod("DEMA", period, 1)
	checkLen("DEMA", len(in), len(dst))
	s := DEMAStream{e1: newEMAState(period), e2: newEMAState(period)}
	dst = dst[:len(in)]
	lb := 2 * (period - 1)
	i := 0
	for ; i < len(in) && i <= lb; i++ { // warm-up and seeds, through the stream
		dst[i] = s.Next(in[i])
	}
	e1, e2, k := s.e1.v, s.e2.v, s.e1.k // steady state: the same arithmetic, inlined
	for ; i < len(in); i++ {
		e1 = (in[i]-e1)*k + e1
		e2 = (e1-e2)*k + e2
		dst[i] = (2.0 * e1) - e2
	}
}

// DEMAStream computes [DEMA] one value at a time. Create it with
// [NewDEMAStream].
type DEMAStream struct{ e1, e2 emaState }

// NewDEMAStream returns a stream giving the same values as [DEMA]. It
// panics if period < 1.
func NewDEMAStream(period int) *DEMAStream {
	checkPeriod("DEMA", period, 1)
	return &DEMAStream{e1: newEMAState(period), e2: newEMAState(period)}
}

// Next adds x and returns the DEMA at it (NaN during the first
// 2*(period-1) inputs).
func (s *DEMAStream) Next(x float64) float64 {
	v1, ok := s.e1.add(x)
	if !ok {
		return math.NaN()
	}
	v2, ok := s.e2.add(v1)
	if !ok {
		return math.NaN()
	}
	return (2.0 * v1) - v2
}

// Peek returns what [DEMAStream.Next] would return for x without changing
// the stream.
func (s *DEMAStream) Peek(x float64) float64 {
	c := *s
	return c.Next(x)
}

// TEMA returns the triple exponential moving average of in, as TA-Lib's
// TEMA:
//
//	e1 = EMA(in, p),  e2 = EMA(e1, p),  e3 = EMA(e2, p)
//	TEMA = e3 + (3*e1 - 3*e2)
//
// The first 3*(period-1) values are NaN (lookback 3*(period-1)). TEMA
// panics if period < 1.
func TEMA(in []float64, period int) []float64 {
	out := make([]float64, len(in))
	TEMAInto(out, in, period)
	return out
}

// TEMAInto is [TEMA] writing into dst, which must have the length of in.
// dst may be in itself. It allocates nothing. It panics if period < 1 or
// the lengths differ.
func TEMAInto(dst, in []float64, period int) {
	checkPeriod("TEMA", period, 1)
	checkLen("TEMA", len(in), len(dst))
	s := TEMAStream{e1: newEMAState(period), e2: newEMAState(period), e3: newEMAState(period)}
	dst = dst[:len(in)]
	lb := 3 * (period - 1)
	i := 0
	for ; i < len(in) && i <= lb; i++ { // warm-up and seeds, through the stream
		dst[i] = s.Next(in[i])
	}
	e1, e2, e3, k := s.e1.v, s.e2.v, s.e3.v, s.e1.k // steady state, inlined
	for ; i < len(in); i++ {
		e1 = (in[i]-e1)*k + e1
		e2 = (e1-e2)*k + e2
		e3 = (e2-e3)*k + e3
		dst[i] = e3 + ((3.0 * e1) - (3.0 * e2))
	}
}

// TEMAStream computes [TEMA] one value at a time. Create it with
// [NewTEMAStream].
type TEMAStream struct{ e1, e2, e3 emaState }

// NewTEMAStream returns a stream giving the same values as [TEMA]. It
// panics if period < 1.
func NewTEMAStream(period int) *TEMAStream {
	checkPeriod("TEMA", period, 1)
	return &TEMAStream{e1: newEMAState(period), e2: newEMAState(period), e3: newEMAState(period)}
}

// Next adds x and returns the TEMA at it (NaN during the first
// 3*(period-1) inputs).
func (s *TEMAStream) Next(x float64) float64 {
	v1, ok := s.e1.add(x)
	if !ok {
		return math.NaN()
	}
	v2, ok := s.e2.add(v1)
	if !ok {
		return math.NaN()
	}
	v3, ok := s.e3.add(v2)
	if !ok {
		return math.NaN()
	}
	return v3 + ((3.0 * v1) - (3.0 * v2))
}

// Peek returns what [TEMAStream.Next] would return for x without changing
// the stream.
func (s *TEMAStream) Peek(x float64) float64 {
	c := *s
	return c.Next(x)
}
