package profiles

import (
	"cmp"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/indicators"
	"github.com/tradekit/tradekit/ohlcv"
)

// TestOrderIntoStable checks orderInto against a stable comparison sort
// of the positions by value, on inputs that take each of its paths:
// buckets of a few values, ties, signed zeros, values piled against an
// outlier (sub-buckets), powers of two (down to radixOrder), infinities
// and a range too wide to scale (radixOrder from the start), all equal,
// and lengths around the insertion-sort cut.
func TestOrderIntoStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	gen := func(n int, f func(i int) float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	tests := []struct {
		name string
		x    []float64
	}{
		{"normal", gen(2520, func(int) float64 { return rng.NormFloat64() })},
		{"ties", gen(2520, func(int) float64 { return float64(rng.IntN(50)) / 4 })},
		{"signed zeros", gen(300, func(i int) float64 {
			if i%2 == 0 {
				return math.Copysign(0, -1)
			}
			return float64(rng.IntN(3) - 1)
		})},
		{"outlier", gen(2520, func(i int) float64 {
			if i == 7 {
				return 1e9
			}
			return rng.NormFloat64()
		})},
		{"two outliers", gen(2520, func(i int) float64 {
			switch i {
			case 3:
				return -1e12
			case 2000:
				return 1e15
			}
			return rng.NormFloat64() * 1e-3
		})},
		{"powers of two", gen(1000, func(i int) float64 { return math.Ldexp(1, -(i % 900)) })},
		{"infinities", gen(500, func(i int) float64 {
			switch i % 97 {
			case 0:
				return math.Inf(1)
			case 1:
				return math.Inf(-1)
			}
			return rng.NormFloat64()
		})},
		{"widest range", gen(500, func(i int) float64 {
			switch i {
			case 10:
				return -math.MaxFloat64
			case 20:
				return math.MaxFloat64
			}
			return rng.NormFloat64()
		})},
		{"subnormal range", gen(500, func(i int) float64 { return float64(rng.IntN(4)) * 5e-324 })},
		{"all equal", gen(1000, func(int) float64 { return 3.5 })},
		{"insertion cut", gen(insertMax, func(int) float64 { return float64(rng.IntN(5)) })},
		{"past the cut", gen(insertMax+1, func(int) float64 { return float64(rng.IntN(5)) })},
		{"one", []float64{1}},
		{"empty", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.x)
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, func(i, j int) int { return cmp.Compare(tt.x[i], tt.x[j]) })
			vals, idx := make([]float64, n), make([]int, n)
			orderInto(vals, idx, tt.x, make([]float64, n), make([]int, n))
			for k := range want {
				// -0 and +0 are equal, and cmp.Compare orders them too:
				// compare the values, then the positions of unequal bits.
				if vals[k] != tt.x[want[k]] || vals[k] != tt.x[idx[k]] {
					t.Fatalf("at %d: value %v (position %d), want %v (position %d)", k, vals[k], idx[k], tt.x[want[k]], want[k])
				}
				if idx[k] != want[k] && tt.x[idx[k]] != 0 {
					t.Fatalf("at %d: position %d, want %d (value %v)", k, idx[k], want[k], tt.x[want[k]])
				}
			}
			slices.Sort(idx)
			for i, p := range idx {
				if p != i {
					t.Fatalf("positions are not a permutation: %d at %d", p, i)
				}
			}
		})
	}
}

// TestOscillatorsMatchIndicators checks that stochasticK and williamsR,
// which take the window's extremes from HighestInto and LowestInto, and
// cciInto give bit for bit the values of indicators.Stochastic,
// indicators.WilliamsR and indicators.CCI, on bars with flat windows (HH == LL), a close
// outside its bar's range and a signed zero low.
func TestOscillatorsMatchIndicators(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	n := 600
	high, low, close := make([]float64, n), make([]float64, n), make([]float64, n)
	c := 100.0
	for i := range close {
		c *= math.Exp(rng.NormFloat64() * 0.02)
		if i >= 100 && i < 140 {
			c = 50 // flat: every window of 14 in it has HH == LL
		}
		close[i] = c
		high[i] = c * (1 + 0.01*rng.Float64())
		low[i] = c * (1 - 0.01*rng.Float64())
		if i >= 100 && i < 140 {
			high[i], low[i] = c, c
		}
	}
	close[300] = high[300] * 1.05
	low[400] = math.Copysign(0, -1)
	same := func(x, y float64) bool {
		return math.Float64bits(x) == math.Float64bits(y) || (math.IsNaN(x) && math.IsNaN(y))
	}
	hh, ll := make([]float64, n), make([]float64, n)
	indicators.HighestInto(hh, high, 14)
	indicators.LowestInto(ll, low, 14)
	wantK, _ := indicators.Stochastic(high, low, close, 14, 3, 3)
	gotK := stochasticK(make([]float64, n), hh, ll, close, 3, 3)
	wantR := indicators.WilliamsR(high, low, close, 14)
	gotR := williamsR(make([]float64, n), hh, ll, close)
	for _, period := range []int{1, 7, 20} {
		want := indicators.CCI(high, low, close, period)
		got := cciInto(make([]float64, n), make([]float64, n), high, low, close, period)
		for i := range want {
			if !same(got[i], want[i]) {
				t.Errorf("cciInto(period %d)[%d] = %v, indicators.CCI %v", period, i, got[i], want[i])
			}
		}
	}
	for i := range close {
		if !same(gotK[i], wantK[i]) {
			t.Errorf("stochasticK[%d] = %v, indicators.Stochastic %v", i, gotK[i], wantK[i])
		}
		if !same(gotR[i], wantR[i]) {
			t.Errorf("williamsR[%d] = %v, indicators.WilliamsR %v", i, gotR[i], wantR[i])
		}
	}
}

// TestScratchReuseGivesSameProfile profiles assets of different lengths
// one after the other with one scratch, as a worker of ComputeAllFrom
// does, in full and updated from the state of all but their last bar,
// and checks that each profile and state equals the one computed on
// fresh memory: no buffer carries a value from one asset into the next.
func TestScratchReuseGivesSameProfile(t *testing.T) {
	var sc scratch
	cfg := DefaultConfig()
	profile := func(s ohlcv.Series, sc *scratch, prev *State) (Profile, []byte) {
		t.Helper()
		sc.reset()
		a, err := newAssetIn(s, cfg, sc)
		if err != nil {
			t.Fatal(err)
		}
		p, next, inc := profileState(a, cfg, prev)
		if inc != (prev != nil) {
			t.Fatalf("n=%d: incremental %v with a state %v", len(s.Dates), inc, prev != nil)
		}
		b, _ := next.MarshalBinary()
		return p, b
	}
	for _, n := range []int{900, 600, 1200, 600} {
		s := walk(n, uint64(n))
		before := ohlcv.Series{Dates: s.Dates[:n-1], Close: s.Close[:n-1], High: s.High[:n-1], Low: s.Low[:n-1]}
		_, prevBytes := profile(before, nil, nil)
		var prev State
		if err := prev.UnmarshalBinary(prevBytes); err != nil {
			t.Fatal(err)
		}
		for _, st := range []*State{nil, &prev} {
			want, wantState := profile(s, nil, st)
			got, gotState := profile(s, &sc, st)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("n=%d, incremental %v: profile with a reused scratch\n%+v\nwant\n%+v", n, st != nil, got, want)
			}
			if !slices.Equal(gotState, wantState) {
				t.Errorf("n=%d, incremental %v: state with a reused scratch differs", n, st != nil)
			}
		}
	}
}

// walk returns n daily bars of a random walk with highs and lows, seeded
// by seed.
func walk(n int, seed uint64) ohlcv.Series {
	rng := rand.New(rand.NewPCG(seed, 2))
	s := ohlcv.Series{Dates: make([]calendar.Date, n), Close: make([]float64, n), High: make([]float64, n), Low: make([]float64, n)}
	c := 100.0
	for i := range n {
		c *= math.Exp(0.0003 + 0.015*rng.NormFloat64())
		s.Dates[i] = calendar.NewDate(2010, 1, 4).AddDays(i)
		s.Close[i], s.High[i], s.Low[i] = c, c*(1+0.01*rng.Float64()), c*(1-0.01*rng.Float64())
	}
	return s
}

// TestLastRulesMatchRules checks that the positions of lastRules at one
// day equal the rules' series of positions at every day, and that they
// report the days before a rule's first, on a walk with a flat stretch
// closing at its high (equal to the channel, no breakout, for weeks) and
// a gap up.
func TestLastRulesMatchRules(t *testing.T) {
	s := walk(700, 3)
	for i := 300; i < 360; i++ {
		s.Close[i], s.High[i], s.Low[i] = 40, 40, 39.5 // closes at the high: no breakout above it
	}
	for i := 500; i < len(s.Close); i++ {
		s.Close[i] *= 1.5
		s.High[i] *= 1.5
		s.Low[i] *= 1.5
	}
	a, err := newAsset(s, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for i, last := range lastRules {
		if last == nil {
			continue
		}
		pos, start := rules[i](a)
		for d := range a.n {
			p, ok := last(a, d)
			if ok != (d >= start) || (ok && p != pos[d]) {
				t.Errorf("rule %d, day %d: lastRule %d, %v; rule %d (first day %d)", i, d, p, ok, pos[d], start)
			}
		}
	}
}

// TestSelectKth checks selectKth against a sort for every k, on values
// with many ties, on distinct ones, on sorted and reversed input, and on
// lengths around its cut to slices.Sort.
func TestSelectKth(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	var inputs [][]float64
	for _, n := range []int{1, 2, 16, 17, 100, 1001} {
		ties, distinct := make([]float64, n), make([]float64, n)
		for i := range ties {
			ties[i] = float64(rng.IntN(5))
			distinct[i] = rng.NormFloat64()
		}
		up := slices.Clone(distinct)
		slices.Sort(up)
		down := slices.Clone(up)
		slices.Reverse(down)
		inputs = append(inputs, ties, distinct, up, down)
	}
	for _, in := range inputs {
		want := slices.Clone(in)
		slices.Sort(want)
		for k := range in {
			x := slices.Clone(in)
			selectKth(x, k)
			if x[k] != want[k] {
				t.Fatalf("n=%d, k=%d: x[k] = %v, want %v", len(in), k, x[k], want[k])
			}
			if slices.Max(x[:k+1]) != x[k] || slices.Min(x[k:]) != x[k] {
				t.Fatalf("n=%d, k=%d: values out of place around x[k] = %v", len(in), k, x[k])
			}
		}
	}
}

// TestIncrementalVolatility checks the parts of an incremental update that
// no longer sort the volatility history against the full computation, bit
// for bit: the volatility summary (the percentile counted, not read off a
// sorted copy) on a history ending flat (today's reading 0, shared by
// many), and medianInPlace against the median tracker of the regime rule
// on histories of odd and even lengths with ties.
func TestIncrementalVolatility(t *testing.T) {
	cfg := DefaultConfig()
	s := walk(700, 21)
	for i := 640; i < 700; i++ {
		s.Close[i], s.High[i], s.Low[i] = 80, 80, 80
	}
	for _, n := range []int{650, 700} { // today's reading moving, then 0
		cut := ohlcv.Series{Dates: s.Dates[:n], Close: s.Close[:n], High: s.High[:n], Low: s.Low[:n]}
		before := ohlcv.Series{Dates: s.Dates[:n-1], Close: s.Close[:n-1], High: s.High[:n-1], Low: s.Low[:n-1]}
		a0, err := newAsset(before, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, prev, _ := profileState(a0, cfg, nil)
		a, err := newAsset(cut, cfg)
		if err != nil {
			t.Fatal(err)
		}
		p, _, inc := profileState(a, cfg, prev)
		if !inc {
			t.Fatalf("n=%d: not incremental", n)
		}
		if want := volatility(rollingVol(a.ret, cfg.VolWindow)); p.Volatility != want {
			t.Errorf("n=%d: incremental volatility %+v, full %+v", n, p.Volatility, want)
		}
	}
	rng := rand.New(rand.NewPCG(17, 17))
	for _, n := range []int{1, 2, 3, 40, 41, 2500, 2501} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(30)) / 7
		}
		m := newMedianTracker(x)
		for _, v := range x {
			m.add(v)
		}
		if got, want := medianInPlace(slices.Clone(x)), m.median(); got != want {
			t.Errorf("n=%d: medianInPlace %v, median tracker %v", n, got, want)
		}
	}
}
