package profiles_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

// FuzzCompute builds a series from fuzzed bytes (each byte a daily move,
// byte 0 a zero close, cycled to a length from the first byte) and checks
// that Compute never panics, that any error wraps ErrInvalid, and that a
// profile keeps its ranges and encodes to JSON (no NaN or Inf).
func FuzzCompute(f *testing.F) {
	f.Add([]byte{1, 128, 130, 126, 129})
	f.Add([]byte{255, 255, 255, 1, 1, 1})
	f.Add([]byte{200, 128})
	f.Add([]byte{10, 128, 0, 128})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := 240 + int(data[0])
		c := make([]float64, n)
		p := 100.0
		for i := range c {
			b := data[i%len(data)]
			if b == 0 {
				c[i] = 0
				continue
			}
			p *= math.Exp((float64(b) - 128) / 400)
			c[i] = p
		}
		s := profiles.Asset{Bars: ohlcv.Series{Dates: tradingDates(day0, n), Close: c}}
		peers := []profiles.Asset{{ID: "p", Bars: ohlcv.Series{Dates: s.Bars.Dates, Close: c}}, {ID: "q", Bars: ohlcv.Series{Dates: s.Bars.Dates[n/3:], Close: c[:n-n/3]}}}
		pr, err := profiles.Compute(s, peers, profiles.Config{})
		if err != nil {
			if !errors.Is(err, tradekit.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if _, err := json.Marshal(pr); err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		a := pr.StrategyAffinity
		for _, v := range []float64{a.Momentum, a.MeanReversion, a.Breakout, a.TrendFollowing} {
			if !(v >= 0 && v <= 1) {
				t.Errorf("affinity %v outside [0,1]", v)
			}
		}
		if v := pr.Volatility.Percentile; !(v >= 0 && v <= 100) {
			t.Errorf("percentile %v outside [0,100]", v)
		}
		for k, sn := range pr.IndicatorSensitivity {
			if math.Abs(sn.PredictiveScore) > 1+1e-12 {
				t.Errorf("%s score %v outside [-1,1]", k, sn.PredictiveScore)
			}
		}
		for _, co := range pr.Correlations {
			if math.Abs(co.Correlation) > 1+1e-12 {
				t.Errorf("correlation %v outside [-1,1]", co.Correlation)
			}
		}
		if len(pr.Regimes.History) == 0 || pr.Regimes.History[len(pr.Regimes.History)-1].Regime != pr.Regimes.Current {
			t.Errorf("regimes %+v: current is not the last run", pr.Regimes)
		}
	})
}
