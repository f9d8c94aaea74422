package profiles_test

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

// tradingDates returns n weekdays (Monday to Friday) from start on.
func tradingDates(start calendar.Date, n int) []calendar.Date {
	out := make([]calendar.Date, 0, n)
	for d := start; len(out) < n; d = d.AddDays(1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			out = append(out, d)
		}
	}
	return out
}

var day0 = calendar.NewDate(2015, 1, 2)

// fromReturns builds closes from a first price and daily log returns
// (ret[0] is ignored).
func fromReturns(p0 float64, ret []float64) []float64 {
	c := make([]float64, len(ret))
	c[0] = p0
	for t := 1; t < len(ret); t++ {
		c[t] = c[t-1] * math.Exp(ret[t])
	}
	return c
}

// gbmReturns returns n daily log returns of a geometric Brownian motion
// with daily drift mu and daily volatility sigma (index 0 unused).
func gbmReturns(rng *rand.Rand, n int, mu, sigma float64) []float64 {
	r := make([]float64, n)
	for t := 1; t < n; t++ {
		r[t] = mu + sigma*rng.NormFloat64()
	}
	return r
}

// series wraps closes on trading dates from day0, with a high and low
// 0.5% around the close.
func series(closes []float64) profiles.Asset {
	h := make([]float64, len(closes))
	l := make([]float64, len(closes))
	for i, c := range closes {
		h[i], l[i] = c*1.005, c*0.995
	}
	return profiles.Asset{Bars: ohlcv.Series{Dates: tradingDates(day0, len(closes)), High: h, Low: l, Close: closes}}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
