package profiles

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat"
	"slices"
	"testing"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

func TestSpearman(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
		want float64
	}{
		// By hand: ranks of y are 1, 2, 3.5, 5, 3.5; Pearson with 1..5 is
		// 8/sqrt(10*9.5) (scipy.stats.spearmanr gives the same).
		{"ties", []float64{1, 2, 3, 4, 5}, []float64{5, 6, 7, 8, 7}, 8 / math.Sqrt(95)},
		{"monotone", []float64{1, 2, 3, 4}, []float64{1, 10, 100, 1000}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{"constant", []float64{1, 2, 3, 4}, []float64{7, 7, 7, 7}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spearman(tt.x, tt.y); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("spearman = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMedianTracker(t *testing.T) {
	vals := []float64{5, 1, 4, 1, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2}
	m := newMedianTracker(vals)
	for i, v := range vals {
		m.add(v)
		s := slices.Clone(vals[:i+1])
		slices.Sort(s)
		want := s[len(s)/2]
		if len(s)%2 == 0 {
			want = (s[len(s)/2-1] + s[len(s)/2]) / 2
		}
		if got := m.median(); got != want {
			t.Errorf("after %d values: median %v, want %v", i+1, got, want)
		}
	}
}

func TestMergeShortRuns(t *testing.T) {
	U, D, R := TrendingUp, TrendingDown, Ranging
	labels := []Regime{"", "", R, R, U, U, U, U, R, U, U, U, D, D, D, D, D}
	got := mergeShortRuns(labels, 2, 3)
	// R(2) is first and kept; U(4) kept; R(1) absorbed into U; U(3) joins;
	// D(5) kept.
	want := []run{{R, 2, 3}, {U, 4, 11}, {D, 12, 16}}
	if !slices.Equal(got, want) {
		t.Errorf("mergeShortRuns = %v, want %v", got, want)
	}
}

func TestBestThresholds(t *testing.T) {
	// The oscillator cycles through fixed readings; the next day's return
	// depends on the reading: <= 20 gains 1%, (20, 45] loses 0.5%,
	// [55, 85) gains 0.5%, >= 85 loses 1%, ±0.1% alternating noise. Going
	// long at <= 20 and short at >= 85 takes every good day and no bad one.
	readings := []float64{5, 20, 22, 40, 50, 60, 80, 87, 95}
	next := func(o float64) float64 {
		switch {
		case o <= 20:
			return 0.01
		case o <= 45:
			return -0.005
		case o < 55:
			return 0
		case o < 85:
			return 0.005
		}
		return -0.01
	}
	const n = 900
	osc := make([]float64, n)
	ret := make([]float64, n)
	for i := range osc {
		osc[i] = readings[i%len(readings)]
		if i > 0 {
			ret[i] = next(osc[i-1]) + 0.001*float64(1-2*(i%2))
		}
	}
	c := make([]float64, n)
	c[0] = 100
	for i := 1; i < n; i++ {
		c[i] = c[i-1] * math.Exp(ret[i])
	}
	d := make([]calendar.Date, n)
	for i := range d {
		d[i] = calendar.NewDate(2020, 1, 1).AddDays(i)
	}
	a, err := newAsset(ohlcv.Series{Dates: d, Close: c}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	got := bestThresholds(a, osc, grid0to100(Thresholds{30, 70}))
	if want := (Thresholds{20, 85}); got != want {
		t.Errorf("bestThresholds = %+v, want %+v", got, want)
	}
}

func TestDayNumber(t *testing.T) {
	tests := []struct {
		in   calendar.Date
		want int32
	}{
		{calendar.NewDate(1970, 1, 1), 0},
		{calendar.NewDate(1970, 1, 2), 1},
		{calendar.NewDate(1969, 12, 31), -1},
		{calendar.NewDate(2024, 2, 29), 19782},
		{calendar.NewDate(2024, 3, 1), 19783},
	}
	for _, tt := range tests {
		if got := dayNumber(tt.in); got != tt.want {
			t.Errorf("dayNumber(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestNoLookAhead checks that the strategies' positions and the raw regime
// labels on day t depend only on data up to t: computed on every prefix of
// a series, they equal those computed on the whole series.
func TestNoLookAhead(t *testing.T) {
	const n = 400
	d := make([]calendar.Date, n)
	c, h, l := make([]float64, n), make([]float64, n), make([]float64, n)
	x := 100.0
	for i := range d {
		d[i] = calendar.NewDate(2020, 1, 1).AddDays(i)
		// A deterministic but irregular path: trend, cycle and a jump.
		x *= math.Exp(0.0005 + 0.02*math.Sin(float64(i*i%97)) + 0.01*math.Sin(float64(i)/9))
		if i == 300 {
			x *= 1.3
		}
		c[i], h[i], l[i] = x, x*1.01, x*0.99
	}
	cfg := DefaultConfig()
	prefix := func(m int) *asset {
		a, err := newAsset(ohlcv.Series{Dates: d[:m], Close: c[:m], High: h[:m], Low: l[:m]}, Config{TrendWindow: 50})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	full := prefix(n)
	rules := map[string]rule{"momentum": momentumPos, "meanReversion": meanReversionPos, "breakout": breakoutPos, "trendFollowing": trendFollowingPos}
	fullPos := map[string][]int8{}
	for name, r := range rules {
		fullPos[name], _ = r(full)
	}
	fullLabels, _ := rawRegimes(full, rollingVol(full.ret, cfg.VolWindow), cfg)
	for m := MinBars; m < n; m += 7 {
		a := prefix(m)
		for name, r := range rules {
			pos, _ := r(a)
			if !slices.Equal(pos, fullPos[name][:m]) {
				t.Errorf("%s: positions on the first %d days differ from the full series'", name, m)
			}
		}
		labels, _ := rawRegimes(a, rollingVol(a.ret, cfg.VolWindow), cfg)
		if !slices.Equal(labels, fullLabels[:m]) {
			t.Errorf("regimes: raw labels on the first %d days differ from the full series'", m)
		}
	}
}

// TestRanksAgainstDefinition checks ranks against the definition, the
// average of 1-based positions among the sorted values: 1 + #{x_j < x_i}
// + (#{x_j == x_i} - 1) / 2, on values with many ties, -0 and +0, and
// infinities.
func TestRanksAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	x := make([]float64, 500)
	for i := range x {
		x[i] = float64(rng.IntN(40)) - 20
	}
	x[3], x[4], x[5], x[6] = math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1)
	got := make([]float64, len(x))
	ranks(got, x, make([]float64, len(x)), make([]int, len(x)))
	for i, v := range x {
		less, equal := 0, 0
		for _, w := range x {
			switch {
			case w < v:
				less++
			case w == v:
				equal++
			}
		}
		if want := 1 + float64(less) + float64(equal-1)/2; got[i] != want {
			t.Errorf("rank of x[%d] = %v: %v, want %v", i, v, got[i], want)
		}
	}
}

// TestRankICMatchesSpearman checks that fwdOrder.rankIC, which ranks the
// forward returns from one sort shared by the indicators, gives exactly
// spearman of the pairs where both series are defined, on series with
// ties, gaps (NaN, ±Inf) and a signed zero.
func TestRankICMatchesSpearman(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n := 800
	fwd, sig := make([]float64, n), make([]float64, n)
	for i := range fwd {
		fwd[i] = float64(rng.IntN(60)-30) / 100 // many ties
		sig[i] = rng.NormFloat64()
		switch rng.IntN(12) {
		case 0:
			fwd[i] = math.NaN()
		case 1:
			sig[i] = math.NaN()
		case 2:
			sig[i] = math.Inf(1)
		case 3:
			sig[i] = float64(rng.IntN(3)) // ties in the signal too
		}
	}
	fwd[10], fwd[11] = math.Copysign(0, -1), 0
	var x, y []float64
	for i := range sig {
		if !math.IsNaN(sig[i]) && !math.IsInf(sig[i], 0) && !math.IsNaN(fwd[i]) {
			x, y = append(x, sig[i]), append(y, fwd[i])
		}
	}
	want := spearman(x, y)
	if got := newFwdOrder(fwd).rankIC(sig); got != want || want == 0 {
		t.Errorf("rankIC = %v, spearman of the pairs = %v; want them equal and not 0", got, want)
	}
	if got := newFwdOrder(fwd).rankIC(make([]float64, n)); got != 0 {
		t.Errorf("rankIC of a constant signal = %v, want 0", got)
	}
}

// spearman, the definition fwdOrder.rankIC is checked against, returns
// Spearman's rank correlation of x and y: the Pearson
// correlation of their average ranks. It returns 0 when either has no
// dispersion.
func spearman(x, y []float64) float64 {
	n := len(x)
	rx, ry, sorted, end := make([]float64, n), make([]float64, n), make([]float64, n), make([]int, n)
	ranks(rx, x, sorted, end)
	ranks(ry, y, sorted, end)
	r := stat.Correlation(rx, ry, nil)
	if math.IsNaN(r) {
		return 0
	}
	return r
}
