package indicators

import "math"

// MACD returns the moving average convergence/divergence of in, as
// TA-Lib's MACD:
//
//	macd   = EMA(in, fast) - EMA(in, slow)
//	signal = EMA(macd, signal)
//	hist   = macd - signal
//
// following TA-Lib in three details. If fast > slow the two are swapped.
// Both EMAs start together at index slow-1: the slow one seeded with the
// mean of in[0..slow-1], the fast one with the mean of in[slow-fast..slow-1]
// (not with a fast EMA run from the start, which is what a plain
// EMA(fast)-EMA(slow) gives). All three outputs start at the lookback
// slow-1 + signal-1 and are NaN before it. MACD panics if any period is < 1.
func MACD(in []float64, fast, slow, signal int) (macd, sig, hist []float64) {
	macd = make([]float64, len(in))
	sig = make([]float64, len(in))
	hist = make([]float64, len(in))
	MACDInto(macd, sig, hist, in, fast, slow, signal)
	return macd, sig, hist
}

// MACDInto is [MACD] writing into three slices of the length of in. Any of
// them may be in itself. It allocates nothing. MACDInto panics if any
// period is < 1 or a length differs.
func MACDInto(dstMACD, dstSignal, dstHist, in []float64, fast, slow, signal int) {
	checkPeriod("MACD fast", fast, 1)
	checkPeriod("MACD slow", slow, 1)
	checkPeriod("MACD signal", signal, 1)
	n := len(in)
	checkLen("MACD", n, len(dstMACD), len(dstSignal), len(dstHist))
	if slow < fast {
		fast, slow = slow, fast
	}
	lb := slow - 1 + signal - 1
	if lb >= n {
		fillNaN(dstMACD)
		fillNaN(dstSignal)
		fillNaN(dstHist)
		return
	}
	dstMACD, dstSignal, dstHist = dstMACD[:n], dstSignal[:n], dstHist[:n]
	s0 := slow - 1 // first index of both EMAs
	var sumSlow, sumFast float64
	for i := 0; i <= s0; i++ {
		sumSlow += in[i]
	}
	for i := slow - fast; i <= s0; i++ {
		sumFast += in[i]
	}
	kSlow, kFast, kSig := perToK(slow), perToK(fast), perToK(signal)
	emaSlow := sumSlow / float64(slow)
	emaFast := sumFast / float64(fast)
	nan := math.NaN()
	for i := 0; i < lb; i++ {
		// The MACD line before lb only feeds the signal seed.
		if i > s0 {
			x := in[i]
			emaSlow = (x-emaSlow)*kSlow + emaSlow
			emaFast = (x-emaFast)*kFast + emaFast
		}
		if i >= s0 {
			dstSignal[i] = emaFast - emaSlow // kept until the seed is summed
		}
	}
	sumSig := 0.0
	for i := s0; i < lb; i++ {
		sumSig += dstSignal[i]
	}
	for i := 0; i < lb; i++ {
		dstMACD[i], dstSignal[i], dstHist[i] = nan, nan, nan
	}
	var sig float64
	for i := lb; i < n; i++ {
		if i > s0 {
			x := in[i]
			emaSlow = (x-emaSlow)*kSlow + emaSlow
			emaFast = (x-emaFast)*kFast + emaFast
		}
		m := emaFast - emaSlow
		if i == lb {
			sig = (sumSig + m) / float64(signal)
		} else {
			sig = (m-sig)*kSig + sig
		}
		dstMACD[i] = m
		dstSignal[i] = sig
		dstHist[i] = m - sig
	}
}

// MACDStream computes [MACD] one value at a time. Create it with
// [NewMACDStream].
type MACDStream struct {
	fast, slow, signal int
	kFast, kSlow, kSig float64
	n                  int // inputs seen, capped at slow+signal-1
	sumSlow, sumFast   float64
	emaFast, emaSlow   float64
	sumSig, sig        float64
}

// NewMACDStream returns a stream giving the same values as [MACD] with the
// same periods (swapping fast and slow if fast > slow). It panics if any
// period is < 1.
func NewMACDStream(fast, slow, signal int) *MACDStream {
	checkPeriod("MACD fast", fast, 1)
	checkPeriod("MACD slow", slow, 1)
	checkPeriod("MACD signal", signal, 1)
	if slow < fast {
		fast, slow = slow, fast
	}
	return &MACDStream{
		fast: fast, slow: slow, signal: signal,
		kFast: perToK(fast), kSlow: perToK(slow), kSig: perToK(signal),
	}
}

// Next adds x as the next input and returns the MACD line, the signal and
// the histogram at it (NaN during the first slow+signal-2 inputs).
func (s *MACDStream) Next(x float64) (macd, signal, hist float64) {
	return s.update(x, true)
}

// Peek returns what [MACDStream.Next] would return for x without changing
// the stream.
func (s *MACDStream) Peek(x float64) (macd, signal, hist float64) {
	return s.update(x, false)
}

func (s *MACDStream) update(x float64, commit bool) (macd, signal, hist float64) {
	s0 := s.slow - 1
	lb := s0 + s.signal - 1
	i := s.n
	sumSlow, sumFast, emaSlow, emaFast, sumSig, sig := s.sumSlow, s.sumFast, s.emaSlow, s.emaFast, s.sumSig, s.sig
	nan := math.NaN()
	macd, signal, hist = nan, nan, nan
	if i <= s0 {
		sumSlow += x
		if i >= s.slow-s.fast {
			sumFast += x
		}
		if i == s0 {
			emaSlow = sumSlow / float64(s.slow)
			emaFast = sumFast / float64(s.fast)
		}
	} else {
		emaSlow = (x-emaSlow)*s.kSlow + emaSlow
		emaFast = (x-emaFast)*s.kFast + emaFast
	}
	if i >= s0 {
		m := emaFast - emaSlow
		switch {
		case i < lb:
			sumSig += m
		case i == lb:
			sig = (sumSig + m) / float64(s.signal)
			macd, signal, hist = m, sig, m-sig
		default:
			sig = (m-sig)*s.kSig + sig
			macd, signal, hist = m, sig, m-sig
		}
	}
	if commit {
		s.sumSlow, s.sumFast, s.emaSlow, s.emaFast, s.sumSig, s.sig = sumSlow, sumFast, emaSlow, emaFast, sumSig, sig
		if i <= lb {
			s.n++
		}
	}
	return macd, signal, hist
}
