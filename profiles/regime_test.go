package profiles_test

import (
	"math"
	"testing"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/profiles"
)

// share returns the fraction of classified days that runs of regime g cover.
func share(t *testing.T, s profiles.Asset, h []profiles.RegimeRun, g profiles.Regime) float64 {
	t.Helper()
	idx := map[calendar.Date]int{}
	for i, d := range s.Bars.Dates {
		idx[d] = i
	}
	first := idx[h[0].From]
	total := len(s.Bars.Dates) - first
	in := 0
	for i, r := range h {
		end := len(s.Bars.Dates) - 1
		if r.To != nil {
			end = idx[*r.To]
		}
		if i < len(h)-1 && r.To == nil {
			t.Fatalf("run %d has no end but is not the last", i)
		}
		if r.Regime == g {
			in += end - idx[r.From] + 1
		}
	}
	return float64(in) / float64(total)
}

func TestRegimes(t *testing.T) {
	const n = 2520
	levelNoise := func(seed uint64) []float64 {
		// Price = 100 * exp(0.02*sin(2πt/30) + 0.01*e_t), e_t iid: a level
		// with stationary noise, no drift: returns are anti-correlated.
		rng := newRand(seed)
		c := make([]float64, n)
		for i := range c {
			c[i] = 100 * math.Exp(0.02*math.Sin(2*math.Pi*float64(i)/30)+0.01*rng.NormFloat64())
		}
		return c
	}
	volBurst := func(seed uint64) []float64 {
		// 1% daily vol, then the last 40 days at 4%: the 20-day vol ends
		// near 4x its long-run median.
		r := gbmReturns(newRand(seed), n, 0, 0.01)
		rng := newRand(seed + 100)
		for i := n - 40; i < n; i++ {
			r[i] = 0.04 * rng.NormFloat64()
		}
		return fromReturns(100, r)
	}
	tests := []struct {
		name     string
		closes   []float64
		want     profiles.Regime
		minShare float64 // share of classified days in runs of want
	}{
		// Daily drift 0.1%, vol 0.2%: T = 0.001/0.002*sqrt(50) ≈ 3.5 > 1.5.
		{"steady uptrend", fromReturns(50, gbmReturns(newRand(1), n, 0.001, 0.002)), profiles.TrendingUp, 0.95},
		{"steady downtrend", fromReturns(500, gbmReturns(newRand(2), n, -0.001, 0.002)), profiles.TrendingDown, 0.95},
		// Noise-free exponential growth: T = +Inf every day.
		{"noise-free uptrend", fromReturns(50, constant(n, 0.0005)), profiles.TrendingUp, 1},
		// A 50-day window of a stationary level has |T| well under 1.5.
		{"stationary level", levelNoise(3), profiles.Ranging, 0.8},
		{"volatility burst", volBurst(4), profiles.Volatile, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := series(tt.closes)
			p, err := profiles.Compute(s, nil, profiles.Config{})
			if err != nil {
				t.Fatal(err)
			}
			r := p.Regimes
			if r.Current != tt.want {
				t.Errorf("current = %s, want %s", r.Current, tt.want)
			}
			last := r.History[len(r.History)-1]
			if last.To != nil || last.Regime != r.Current {
				t.Errorf("last run = %+v, want ongoing %s", last, r.Current)
			}
			if got := share(t, s, r.History, tt.want); got < tt.minShare {
				t.Errorf("share of %s = %.3f, want >= %.2f", tt.want, got, tt.minShare)
			}
		})
	}
}

func constant(n int, v float64) []float64 {
	r := make([]float64, n)
	for i := range r {
		r[i] = v
	}
	return r
}

// TestRegimesConstantVolNeverVolatile: a GBM with constant volatility has
// a 20-day volatility within about ±3 standard errors (±16% each) of its
// median, so it should never reach the 1.5x entry level for 10 days.
func TestRegimesConstantVolNeverVolatile(t *testing.T) {
	for seed := uint64(10); seed < 15; seed++ {
		s := series(fromReturns(100, gbmReturns(newRand(seed), 2520, 0, 0.015)))
		p, err := profiles.Compute(s, nil, profiles.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if got := share(t, s, p.Regimes.History, profiles.Volatile); got > 0 {
			t.Errorf("seed %d: volatile share %.3f, want 0", seed, got)
		}
	}
}

// TestRegimeRunsContiguous checks the history's structure on a random
// walk: runs follow each other day by day, and every run but the first is
// at least MinRun trading days long.
func TestRegimeRunsContiguous(t *testing.T) {
	s := series(fromReturns(100, gbmReturns(newRand(7), 2520, 0, 0.02)))
	cfg := profiles.DefaultConfig()
	p, err := profiles.Compute(s, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{}
	for i, d := range s.Bars.Dates {
		idx[d.String()] = i
	}
	h := p.Regimes.History
	if len(h) < 3 {
		t.Fatalf("a 10-year random walk gave only %d runs", len(h))
	}
	if got, want := idx[h[0].From.String()], cfg.TrendWindow; got != want {
		t.Errorf("first run starts at index %d, want %d", got, want)
	}
	for i := 0; i < len(h)-1; i++ {
		from, to := idx[h[i].From.String()], idx[h[i].To.String()]
		next := idx[h[i+1].From.String()]
		if next != to+1 {
			t.Errorf("run %d ends at %d, next starts at %d", i, to, next)
		}
		if h[i].Regime == h[i+1].Regime {
			t.Errorf("runs %d and %d are both %s", i, i+1, h[i].Regime)
		}
		if i > 0 && to-from+1 < cfg.MinRun {
			t.Errorf("run %d lasts %d days, want >= %d", i, to-from+1, cfg.MinRun)
		}
	}
}
