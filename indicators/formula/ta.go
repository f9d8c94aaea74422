package formula

import (
	"math"

	"github.com/tradekit/tradekit/indicators"
)

// This file holds the indicator windows that package indicators does not
// provide yet, written locally with TA-Lib's definitions. Each is replaced
// by the indicators function of the same name once it exists.

var taBollingerBands = indicators.BollingerBands

// emaFrom returns EMA(in, p) computed on in[from:], NaN before from.
func emaFrom(in []float64, p, from int) []float64 {
	out := make([]float64, len(in))
	fill(out, math.NaN())
	if from < len(in) {
		copy(out[from:], indicators.EMA(in[from:], p))
	}
	return out
}

// taDEMA is TA-Lib's DEMA: 2*EMA - EMA(EMA), lookback 2*(p-1).
func taDEMA(in []float64, p int) []float64 {
	e1 := indicators.EMA(in, p)
	e2 := emaFrom(e1, p, p-1)
	for i := range e1 {
		e1[i] = 2*e1[i] - e2[i]
	}
	return e1
}

// taTEMA is TA-Lib's TEMA: 3*EMA - 3*EMA(EMA) + EMA(EMA(EMA)), lookback
// 3*(p-1).
func taTEMA(in []float64, p int) []float64 {
	e1 := indicators.EMA(in, p)
	e2 := emaFrom(e1, p, p-1)
	e3 := emaFrom(e2, p, 2*(p-1))
	for i := range e1 {
		e1[i] = 3*e1[i] - 3*e2[i] + e3[i]
	}
	return e1
}

// taWMA is TA-Lib's WMA: weights 1..p, the newest bar weighing p.
func taWMA(in []float64, p int) []float64 {
	out := make([]float64, len(in))
	fill(out, math.NaN())
	div := float64(p) * float64(p+1) / 2
	for i := p - 1; i < len(in); i++ {
		s := 0.0
		for j := 0; j < p; j++ {
			s += float64(j+1) * in[i-p+1+j]
		}
		out[i] = s / div
	}
	return out
}

// taROC is TA-Lib's ROC: (x/x[p] - 1) * 100, 0 when x[p] is 0.
func taROC(in []float64, p int) []float64 {
	out := make([]float64, len(in))
	fill(out, math.NaN())
	for i := p; i < len(in); i++ {
		if prev := in[i-p]; prev != 0 {
			out[i] = (in[i]/prev - 1) * 100
		} else {
			out[i] = 0
		}
	}
	return out
}

// taMomentum is TA-Lib's MOM: x - x[p].
func taMomentum(in []float64, p int) []float64 {
	out := make([]float64, len(in))
	fill(out, math.NaN())
	for i := p; i < len(in); i++ {
		out[i] = in[i] - in[i-p]
	}
	return out
}

// taStdDev is TA-Lib's STDDEV: k times the population standard deviation
// over p bars, from running sums of x and x², 0 when the variance is not
// positive.
func taStdDev(in []float64, p int, k float64) []float64 {
	out := make([]float64, len(in))
	fill(out, math.NaN())
	var s, s2 float64
	for i, v := range in {
		s += v
		s2 += v * v
		if i >= p {
			o := in[i-p]
			s -= o
			s2 -= o * o
		}
		if i >= p-1 {
			m := s / float64(p)
			if v := s2/float64(p) - m*m; v > 1e-14 {
				out[i] = math.Sqrt(v) * k
			} else {
				out[i] = 0
			}
		}
	}
	return out
}

// taHighest is TA-Lib's MAX over p bars.
func taHighest(in []float64, p int) []float64 { return extreme(in, p, 1) }

// taLowest is TA-Lib's MIN over p bars.
func taLowest(in []float64, p int) []float64 { return extreme(in, p, -1) }

func extreme(in []float64, p int, sign float64) []float64 {
	out := make([]float64, len(in))
	fill(out, math.NaN())
	for i := p - 1; i < len(in); i++ {
		m := in[i-p+1]
		for _, v := range in[i-p+2 : i+1] {
			if (v-m)*sign > 0 {
				m = v
			}
		}
		out[i] = m
	}
	return out
}

// taSum is TA-Lib's SUM over p bars.
func taSum(in []float64, p int) []float64 {
	out := make([]float64, len(in))
	fill(out, math.NaN())
	s := 0.0
	for i, v := range in {
		s += v
		if i >= p {
			s -= in[i-p]
		}
		if i >= p-1 {
			out[i] = s
		}
	}
	return out
}
