package indicators

import "math"

// BollingerBands returns Bollinger bands of in, as TA-Lib's BBANDS with a
// simple moving average and nbDevUp = nbDevDn = k:
//
//	middle = SMA(in, period)
//	sd     = sqrt(mean(in²) - middle²)   (population standard deviation; 0 below 1e-14)
//	upper  = middle + k*sd,  lower = middle - k*sd
//
// The first period-1 values are NaN (lookback period-1). BollingerBands
// panics if period < 1.
func BollingerBands(in []float64, period int, k float64) (upper, middle, lower []float64) {
	upper = make([]float64, len(in))
	middle = make([]float64, len(in))
	lower = make([]float64, len(in))
	BollingerBandsInto(upper, middle, lower, in, period, k)
	return upper, middle, lower
}

// BollingerBandsInto is [BollingerBands] writing into three slices of the
// length of in, none overlapping in. It allocates nothing. It panics if
// period < 1 or a length differs.
func BollingerBandsInto(upper, middle, lower, in []float64, period int, k float64) {
	checkPeriod("BollingerBands", period, 1)
	n := len(in)
	checkLen("BollingerBands", n, len(upper), len(middle), len(lower))
	lb := period - 1
	if !warmUp(lb, n, upper, middle, lower) {
		return
	}
	upper, middle, lower = upper[:n], middle[:n], lower[:n]
	var sum, sum2 float64
	for i := 0; i < lb; i++ {
		x := in[i]
		sum += x
		sum2 += x * x
	}
	p := float64(period)
	for i := lb; i < n; i++ {
		x := in[i]
		sum += x
		t := sum
		old := in[i-lb]
		sum -= old
		ma := t / p
		sum2 += x * x
		mean2 := sum2 / p
		sum2 -= old * old
		mean2 -= ma * ma
		sd := 0.0
		if !(mean2 < taEpsilon) {
			sd = math.Sqrt(mean2)
		}
		d := sd * k
		middle[i] = ma
		upper[i] = ma + d
		lower[i] = ma - d
	}
}

// BollingerStream computes [BollingerBands] one value at a time. Create it
// with [NewBollingerStream].
type BollingerStream struct {
	period    int
	k         float64
	w         window // the last period-1 inputs
	sum, sum2 float64
}

// NewBollingerStream returns a stream giving the same values as
// [BollingerBands] with the same period and k. It panics if period < 1.
func NewBollingerStream(period int, k float64) *BollingerStream {
	checkPeriod("BollingerBands", period, 1)
	return &BollingerStream{period: period, k: k, w: newWindow(period - 1)}
}

// Next adds x as the next input and returns the bands at it (NaN during
// the first period-1 inputs).
func (s *BollingerStream) Next(x float64) (upper, middle, lower float64) {
	return s.update(x, true)
}

// Peek returns what [BollingerStream.Next] would return for x without
// changing the stream.
func (s *BollingerStream) Peek(x float64) (upper, middle, lower float64) {
	return s.update(x, false)
}

func (s *BollingerStream) update(x float64, commit bool) (upper, middle, lower float64) {
	if !s.w.full() {
		if commit {
			s.sum += x
			s.sum2 += x * x
			s.w.push(x)
		}
		nan := math.NaN()
		return nan, nan, nan
	}
	old := x
	if len(s.w.buf) > 0 {
		old = s.w.oldest()
	}
	p := float64(s.period)
	t := s.sum + x
	ma := t / p
	t2 := s.sum2 + x*x
	mean2 := t2 / p
	mean2 -= ma * ma
	sd := 0.0
	if !(mean2 < taEpsilon) {
		sd = math.Sqrt(mean2)
	}
	d := sd * s.k
	if commit {
		s.sum = t - old
		s.sum2 = t2 - old*old
		s.w.push(x)
	}
	return ma + d, ma, ma - d
}
