package indicators

import (
	"fmt"
	"math"
)

// taEpsilon is TA-Lib's TA_EPSILON: sums below it count as zero in RSI and
// the standard deviations (TA_IS_ZERO, TA_IS_ZERO_OR_NEG in ta_utility.h).
const taEpsilon = 1e-14

// checkPeriod panics when period is below min.
func checkPeriod(name string, period, min int) {
	if period < min {
		panic(fmt.Sprintf("indicators: %s period %d is below %d", name, period, min))
	}
}

// checkLen panics unless every length equals n.
func checkLen(name string, n int, lens ...int) {
	for _, l := range lens {
		if l != n {
			panic(fmt.Sprintf("indicators: %s length mismatch (%d != %d)", name, l, n))
		}
	}
}

// warmUp writes NaN over the first lb values of each dst, the indices
// where an indicator with lookback lb is not yet defined, or over all of
// them when there are only n <= lb inputs. It reports whether values
// remain to be computed (n > lb). A dst must not be an input the caller
// still has to read.
func warmUp(lb, n int, dsts ...[]float64) bool {
	if lb >= n {
		for _, d := range dsts {
			fillNaN(d)
		}
		return false
	}
	for _, d := range dsts {
		fillNaN(d[:lb])
	}
	return true
}

// fillNaN sets every element of dst to NaN.
func fillNaN(dst []float64) {
	nan := math.NaN()
	for i := range dst {
		dst[i] = nan
	}
}

// isZero is TA-Lib's TA_IS_ZERO.
func isZero(v float64) bool { return -taEpsilon < v && v < taEpsilon }

// perToK is TA-Lib's PER_TO_K: the EMA smoothing factor 2/(period+1).
func perToK(period int) float64 { return 2.0 / float64(period+1) }
