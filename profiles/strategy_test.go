package profiles_test

import (
	"math"
	"testing"

	"github.com/tradekit/tradekit/profiles"
)

func TestAffinity(t *testing.T) {
	const n = 2520
	sine := func(period float64, seed uint64) []float64 {
		// A price oscillating ±10% around 100: log price 0.1*sin(θ), the
		// phase θ advancing 2π/period a day with 20% jitter (so lagged rules
		// cannot lock onto an exact period), plus 0.3% iid noise. The cycle
		// is no longer than the 20-day window of the reversion rule.
		rng := newRand(seed)
		c := make([]float64, n)
		th := 0.0
		for i := range c {
			th += 2 * math.Pi / period * (1 + 0.2*rng.NormFloat64())
			c[i] = 100 * math.Exp(0.1*math.Sin(th)+0.003*rng.NormFloat64())
		}
		return c
	}
	ou := func(halfLife float64, seed uint64) []float64 {
		// Ornstein-Uhlenbeck log price (AR(1) with phi = 0.5^(1/halfLife)),
		// the stochastic form of a mean-reverting oscillation.
		rng := newRand(seed)
		phi := math.Pow(0.5, 1/halfLife)
		c := make([]float64, n)
		x := 0.0
		for i := range c {
			x = phi*x + 0.01*rng.NormFloat64()
			c[i] = 100 * math.Exp(x)
		}
		return c
	}
	reverting := []struct {
		name   string
		closes []float64
	}{
		{"sine period 10", sine(10, 1)},
		{"sine period 15", sine(15, 2)},
		{"sine period 20", sine(20, 3)},
		{"OU half-life 2", ou(2, 4)},
		{"OU half-life 5", ou(5, 5)},
		{"OU half-life 10", ou(10, 6)},
	}
	for _, tt := range reverting {
		t.Run(tt.name, func(t *testing.T) {
			p, err := profiles.Compute(series(tt.closes), nil, profiles.Config{})
			if err != nil {
				t.Fatal(err)
			}
			a := p.StrategyAffinity
			if a.MeanReversion <= 0.5 {
				t.Errorf("meanReversion %.3f, want > 0.5 (profitable)", a.MeanReversion)
			}
			for name, v := range map[string]float64{"momentum": a.Momentum, "trendFollowing": a.TrendFollowing, "breakout": a.Breakout} {
				if a.MeanReversion <= v {
					t.Errorf("meanReversion %.3f <= %s %.3f", a.MeanReversion, name, v)
				}
			}
		})
	}
	t.Run("uptrend prefers momentum and trend following", func(t *testing.T) {
		// Drift 0.1%/day, vol 1%/day: the rules that stay long earn the
		// asset's own Sharpe, sqrt(252)*0.1 ≈ 1.6; reversion shorts strength.
		p, err := profiles.Compute(series(fromReturns(50, gbmReturns(newRand(2), n, 0.001, 0.01))), nil, profiles.Config{})
		if err != nil {
			t.Fatal(err)
		}
		a := p.StrategyAffinity
		for name, v := range map[string]float64{"momentum": a.Momentum, "trendFollowing": a.TrendFollowing} {
			if v < 0.7 || v <= a.MeanReversion {
				t.Errorf("%s %.3f, want >= 0.7 and > meanReversion %.3f", name, v, a.MeanReversion)
			}
		}
	})
	t.Run("scores in (0,1)", func(t *testing.T) {
		p, err := profiles.Compute(series(fromReturns(50, gbmReturns(newRand(3), n, 0, 0.02))), nil, profiles.Config{})
		if err != nil {
			t.Fatal(err)
		}
		a := p.StrategyAffinity
		for _, v := range []float64{a.Momentum, a.MeanReversion, a.Breakout, a.TrendFollowing} {
			if !(v > 0 && v < 1) {
				t.Errorf("score %v outside (0,1)", v)
			}
		}
	})
}
