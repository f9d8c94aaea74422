package profiles_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

// without returns s with the bars at the indexes drop left out.
func without(s ohlcv.Series, drop ...int) ohlcv.Series {
	keep := func(x []float64) []float64 {
		if x == nil {
			return nil
		}
		var out []float64
		for i, v := range x {
			if !slices.Contains(drop, i) {
				out = append(out, v)
			}
		}
		return out
	}
	out := ohlcv.Series{High: keep(s.High), Low: keep(s.Low), Close: keep(s.Close)}
	for i, d := range s.Dates {
		if !slices.Contains(drop, i) {
			out.Dates = append(out.Dates, d)
		}
	}
	return out
}

// mixedUniverse returns 60 assets of 600 bars on one calendar, made from a
// one-factor model, of which some are not on it over the last year: a day
// missing inside the window (the pairwise merge folds it), a history that
// ends early, one that ends a day later than the others, a missing close
// for a peer, a constant series (no dispersion), and a series too short
// to profile. The rest trade on the calendar, some with gaps before the
// window only.
func mixedUniverse() (series, peers []profiles.Asset) {
	series, peers = benchUniverse(60, 600)
	n := 600
	for i := range series {
		s := series[i].Bars
		switch i % 10 {
		case 1: // a gap inside the correlation window
			s = without(s, n-40, n-100)
		case 2: // a gap before the window only: still on the calendar
			s = without(s, 50)
		case 3: // ends two weeks early
			s = s.Slice(0, n-10)
		case 4: // one bar more than the others
			ext := tradingDates(s.Dates[0], n+1)
			s = ohlcv.Series{Dates: ext, High: append(slices.Clone(s.High), s.High[n-1]),
				Low: append(slices.Clone(s.Low), s.Low[n-1]), Close: append(slices.Clone(s.Close), s.Close[n-1]*1.01)}
		case 5:
			if i == 5 { // no dispersion over the window
				c := slices.Clone(s.Close)
				for t := n - 300; t < n; t++ {
					c[t] = c[n-301]
				}
				s.Close = c
			}
		case 6:
			if i == 6 { // too short to profile
				s = s.Slice(n-100, n)
			}
		}
		series[i].Bars = s
		peers[i].Bars = ohlcv.Series{Dates: s.Dates, Close: s.Close}
	}
	// A peer with a missing close in the window (a close of 0 counts as
	// missing for a peer, and makes the series invalid).
	c := slices.Clone(peers[7].Bars.Close)
	c[n-20] = 0
	peers[7].Bars.Close = c
	series[7].Bars.Close = c
	return series, peers
}

// TestComputeAllEqualsCompute checks that the batch's profiles, with their
// correlations from one matrix product for the assets on the calendar,
// equal those of Universe.Compute (the pairwise merge for every pair)
// within 1e-9, on a universe that mixes assets on the calendar and off it.
func TestComputeAllEqualsCompute(t *testing.T) {
	t.Parallel()
	series, peers := mixedUniverse()
	u, err := profiles.NewUniverse(peers)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []profiles.Config{{}, {CorrWindow: 100, MinOverlap: 50, TopPeers: 59}} {
		type outcome struct {
			p   profiles.Profile
			err error
		}
		got := make([]outcome, len(series))
		var mu sync.Mutex
		calls := 0
		err := u.ComputeAll(series, cfg, 3, func(i int, p profiles.Profile, err error) bool {
			mu.Lock()
			defer mu.Unlock()
			calls++
			got[i] = outcome{p, err}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if calls != len(series) {
			t.Fatalf("each called %d times, want %d", calls, len(series))
		}
		ranked := 0
		for i, s := range series {
			want, wantErr := u.Compute(s, cfg)
			if (wantErr == nil) != (got[i].err == nil) {
				t.Errorf("series %d: ComputeAll error %v, Compute error %v", i, got[i].err, wantErr)
				continue
			}
			if diff := cmp.Diff(want, got[i].p, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("series %d (config %+v): ComputeAll differs from Compute (-want +got):\n%s", i, cfg, diff)
			}
			ranked += len(want.Correlations)
		}
		if ranked == 0 {
			t.Fatalf("no correlations at all with config %+v: the test compares nothing", cfg)
		}
	}
}

// TestComputeAllConfigError checks that a Config out of range fails before
// any profile.
func TestComputeAllConfigError(t *testing.T) {
	t.Parallel()
	series, peers := mixedUniverse()
	u, err := profiles.NewUniverse(peers)
	if err != nil {
		t.Fatal(err)
	}
	err = u.ComputeAll(series, profiles.Config{CorrWindow: 10, MinOverlap: 20}, 0, func(int, profiles.Profile, error) bool {
		t.Error("each called despite a bad config")
		return true
	})
	if err == nil {
		t.Error("ComputeAll with MinOverlap > CorrWindow: no error")
	}
}
