package profiles

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// pctTol is the relative tolerance within which a past reading counts as
// equal to the current one for the percentile (rounding noise).
const pctTol = 1e-9

// volatility summarises the rolling 20-day volatility vol (see the package
// documentation).
func volatility(vol []float64) Volatility {
	var hist []float64
	for _, v := range vol {
		if !math.IsNaN(v) {
			hist = append(hist, v)
		}
	}
	cur := hist[len(hist)-1]
	tail := func(k int) float64 {
		return stat.Mean(hist[max(0, len(hist)-k):], nil)
	}
	avg30, avg90 := tail(30), tail(90)
	sortFloats(hist)
	return Volatility{
		Current:    cur,
		Avg30d:     avg30,
		Avg90d:     avg90,
		Percentile: 100 * stat.CDF(cur*(1+pctTol), stat.Empirical, hist, nil),
	}
}
