package profiles_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

// weekdays returns n weekdays from 2 January 2024 on.
func weekdays(n int) []calendar.Date {
	var out []calendar.Date
	for d := calendar.NewDate(2024, 1, 2); len(out) < n; d = d.AddDays(1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
			out = append(out, d)
		}
	}
	return out
}

func ExampleCompute() {
	// Two years of a steady uptrend: +0.1% a day with 0.5% noise
	// (annualised volatility 0.005*sqrt(252) ≈ 0.079).
	rng := rand.New(rand.NewPCG(1, 1))
	dates := weekdays(504)
	closes := make([]float64, len(dates))
	closes[0] = 100
	for t := 1; t < len(closes); t++ {
		closes[t] = closes[t-1] * math.Exp(0.001+0.005*rng.NormFloat64())
	}
	p, err := profiles.Compute(profiles.Asset{Bars: ohlcv.Series{Dates: dates, Close: closes}}, nil, profiles.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("regime:", p.Regimes.Current)
	fmt.Printf("trend following %.2f, mean reversion %.2f\n", p.StrategyAffinity.TrendFollowing, p.StrategyAffinity.MeanReversion)
	fmt.Printf("volatility %.2f (90-day average %.2f)\n", p.Volatility.Current, p.Volatility.Avg90d)

	_, err = profiles.Compute(profiles.Asset{Bars: ohlcv.Series{Dates: dates[:100], Close: closes[:100]}}, nil, profiles.Config{})
	fmt.Println(err)
	// Output:
	// regime: trending_up
	// trend following 0.90, mean reversion 0.23
	// volatility 0.08 (90-day average 0.08)
	// profiles: series has 100 daily bars, need at least 253 (one trading year of returns): invalid argument
}

func ExampleUniverse_Compute() {
	// A market factor and three assets: a and b load on it, c does not.
	rng := rand.New(rand.NewPCG(2, 2))
	dates := weekdays(300)
	mkt := make([]float64, len(dates))
	for t := range mkt {
		mkt[t] = 0.01 * rng.NormFloat64()
	}
	asset := func(beta, idio float64) []float64 {
		c := make([]float64, len(dates))
		c[0] = 50
		for t := 1; t < len(c); t++ {
			c[t] = c[t-1] * math.Exp(beta*mkt[t]+idio*rng.NormFloat64())
		}
		return c
	}
	closes := map[string][]float64{"a": asset(1, 0.005), "b": asset(1, 0.01), "c": asset(0, 0.01)}
	var peers []profiles.Asset
	for _, id := range []string{"a", "b", "c"} {
		peers = append(peers, profiles.Asset{ID: id, Symbol: "SYM-" + id, Bars: ohlcv.Series{Dates: dates, Close: closes[id]}})
	}
	u, err := profiles.NewUniverse(peers) // once for the whole batch
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := u.Compute(profiles.Asset{ID: "a", Bars: ohlcv.Series{Dates: dates, Close: closes["a"]}}, profiles.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Population correlations with a: b 1/sqrt(2.5) ≈ 0.63, c 0; these are
	// sample estimates over the last 252 returns.
	for _, c := range p.Correlations {
		fmt.Printf("%s %.2f\n", c.Symbol, c.Correlation)
	}
	b, _ := json.Marshal(p.Correlations[:1])
	fmt.Println(string(b))
	// Output:
	// SYM-b 0.57
	// SYM-c -0.11
	// [{"assetId":"b","symbol":"SYM-b","correlation":0.5681602785570308}]
}
