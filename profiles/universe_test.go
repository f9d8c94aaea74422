package profiles_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

// withCorrelation returns y = rho*x + sqrt(1-rho²)*z' where z' is z made
// orthogonal to x in the sample and scaled to x's sample spread, so the
// sample Pearson correlation of x and y is exactly rho (Gram-Schmidt).
func withCorrelation(x, z []float64, rho float64) []float64 {
	n := float64(len(x))
	mean := func(v []float64) (m float64) {
		for _, e := range v {
			m += e
		}
		return m / n
	}
	mx, mz := mean(x), mean(z)
	xc, zc := make([]float64, len(x)), make([]float64, len(x))
	var xx, xz float64
	for i := range x {
		xc[i], zc[i] = x[i]-mx, z[i]-mz
		xx += xc[i] * xc[i]
		xz += xc[i] * zc[i]
	}
	var zz float64
	for i := range zc {
		zc[i] -= xz / xx * xc[i]
		zz += zc[i] * zc[i]
	}
	y := make([]float64, len(x))
	for i := range y {
		y[i] = 0.0003 + rho*xc[i] + math.Sqrt(1-rho*rho)*zc[i]*math.Sqrt(xx/zz)
	}
	return y
}

// closesOf turns len(r) returns into len(r)+1 closes from 100.
func closesOf(r []float64) []float64 {
	return fromReturns(100, append([]float64{0}, r...))
}

func TestCorrelations(t *testing.T) {
	const k = 252 // the default window: the asset's last 252 returns
	rng := newRand(21)
	x := make([]float64, k)
	for i := range x {
		x[i] = 0.01 * rng.NormFloat64()
	}
	noise := func() []float64 {
		z := make([]float64, k)
		for i := range z {
			z[i] = 0.01 * rng.NormFloat64()
		}
		return z
	}
	dates := tradingDates(day0, k+1)
	asset := profiles.Asset{ID: "self", Bars: ohlcv.Series{Dates: dates, Close: closesOf(x)}}
	peer := func(id string, rho float64) profiles.Asset {
		return profiles.Asset{ID: id, Symbol: "S" + id, Bars: ohlcv.Series{Dates: dates, Close: closesOf(withCorrelation(x, noise(), rho))}}
	}
	// A peer that traded only the last 100 days: below the 126-return minimum overlap.
	short := peer("short", 0.99)
	short.Bars.Dates, short.Bars.Close = short.Bars.Dates[k-100:], short.Bars.Close[k-100:]
	peers := []profiles.Asset{
		peer("c", -0.3), peer("a", 0.8), short, peer("b", 0.5),
		{ID: "self", Symbol: "SELF", Bars: ohlcv.Series{Dates: dates, Close: asset.Bars.Close}}}
	p, err := profiles.Compute(asset, peers, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := []profiles.Correlation{
		{AssetID: "a", Symbol: "Sa", Correlation: 0.8},
		{AssetID: "b", Symbol: "Sb", Correlation: 0.5},
		{AssetID: "c", Symbol: "Sc", Correlation: -0.3},
	}
	if diff := cmp.Diff(want, p.Correlations, approx); diff != "" {
		t.Errorf("correlations mismatch (-want +got):\n%s", diff)
	}

	t.Run("top N", func(t *testing.T) {
		p, err := profiles.Compute(asset, peers, profiles.Config{TopPeers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Correlations) != 1 || p.Correlations[0].AssetID != "a" {
			t.Errorf("got %+v, want only a", p.Correlations)
		}
	})
}

func TestCorrelationsAlignment(t *testing.T) {
	// Two years of returns with population correlation 0.8 (y = 0.8x +
	// 0.6z, x and z independent). The peer misses every 7th day, and the
	// asset has 30 days the peer does not: returns are taken between
	// common dates, which keeps the correlation at 0.8 for summed returns.
	// The standard error of r over ~210 pairs is (1-0.64)/sqrt(210) ≈ 0.025.
	rng := newRand(22)
	const n = 504
	dates := tradingDates(day0, n+1)
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		x[i], y[i] = 0.01*a, 0.01*(0.8*a+0.6*b)
	}
	ac, pc := closesOf(x), closesOf(y)
	var pd []calendar.Date
	var pcl []float64
	for i := range dates {
		if i%7 != 3 {
			pd = append(pd, dates[i])
			pcl = append(pcl, pc[i])
		}
	}
	asset := profiles.Asset{Bars: ohlcv.Series{Dates: dates, Close: ac}}
	p, err := profiles.Compute(asset, []profiles.Asset{{ID: "p", Symbol: "P", Bars: ohlcv.Series{Dates: pd, Close: pcl}}}, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Correlations) != 1 {
		t.Fatalf("got %d correlations, want 1", len(p.Correlations))
	}
	if got := p.Correlations[0].Correlation; math.Abs(got-0.8) > 0.05 {
		t.Errorf("correlation %.4f, want 0.80 ± 0.05", got)
	}
}

func TestNewUniverseErrors(t *testing.T) {
	d := tradingDates(day0, 3)
	tests := []struct {
		name string
		peer profiles.Asset
	}{
		{"length mismatch", profiles.Asset{ID: "x", Bars: ohlcv.Series{Dates: d, Close: []float64{1, 2}}}},
		{"dates not ascending", profiles.Asset{ID: "x", Bars: ohlcv.Series{Dates: []calendar.Date{d[1], d[0], d[2]}, Close: []float64{1, 2, 3}}}},
		{"same date twice", profiles.Asset{ID: "x", Bars: ohlcv.Series{Dates: []calendar.Date{d[0], d[0], d[2]}, Close: []float64{1, 2, 3}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := profiles.NewUniverse([]profiles.Asset{tt.peer})
			if !errors.Is(err, tradekit.ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
	u, err := profiles.NewUniverse([]profiles.Asset{{ID: "x", Bars: ohlcv.Series{Dates: d, Close: []float64{1, math.NaN(), 0}}}})
	if err != nil || u.Len() != 1 {
		t.Errorf("missing closes: u.Len() = %d, err = %v; want 1, nil", u.Len(), err)
	}
}

// TestComputeMatchesUniverse checks that the one-shot Compute, which
// prepares only the peers' last year, gives the same profile as a full
// Universe, on peers with different histories and gaps.
func TestComputeMatchesUniverse(t *testing.T) {
	series, peers := benchUniverse(12, 700)
	peers[3].Bars.Dates, peers[3].Bars.Close = peers[3].Bars.Dates[200:], peers[3].Bars.Close[200:] // listed later
	peers[4].Bars.Dates, peers[4].Bars.Close = peers[4].Bars.Dates[:400], peers[4].Bars.Close[:400] // delisted early
	peers[5].Bars.Close = slices.Clone(peers[5].Bars.Close)
	for i := 600; i < 700; i += 9 {
		peers[5].Bars.Close[i] = math.NaN() // missing days
	}
	u, err := profiles.NewUniverse(peers)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range series[:3] {
		want, err := u.Compute(s, profiles.Config{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := profiles.Compute(s, peers, profiles.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Compute differs from Universe.Compute (-want +got):\n%s", s.ID, diff)
		}
		if len(want.Correlations) != 10 {
			t.Errorf("%s: %d correlations, want 10 (12 peers less itself and the one delisted before the window)", s.ID, len(want.Correlations))
		}
	}
}

// TestUniverseConcurrent profiles assets from several goroutines sharing
// one Universe (run with -race) and checks the results match serial ones.
func TestUniverseConcurrent(t *testing.T) {
	series, peers := benchUniverse(8, 300)
	u, err := profiles.NewUniverse(peers)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]profiles.Profile, len(series))
	for i, s := range series {
		if want[i], err = u.Compute(s, profiles.Config{}); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]profiles.Profile, len(series))
	done := make(chan struct{})
	for i, s := range series {
		go func() {
			defer func() { done <- struct{}{} }()
			got[i], _ = u.Compute(s, profiles.Config{})
		}()
	}
	for range series {
		<-done
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("concurrent profiles differ (-want +got):\n%s", diff)
	}
}
