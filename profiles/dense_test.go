package profiles

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tradekit/tradekit/ohlcv"
)

// TestDenseTwinsMatchPairwise checks the dense correlations, with blocks
// of 7 rows so that twins meet across blocks, against the pairwise merge
// of Universe.Compute: each series' ranking equals the reference within
// 1e-9. The universe mixes twins (series that are their own peer), a
// series whose ID has a peer with other closes, a series with no ID, one
// listed twice, a peer off the calendar (a gap), and a series and a peer
// that do not move.
func TestDenseTwinsMatchPairwise(t *testing.T) {
	const m, n = 40, 400
	cfg, err := Config{CorrWindow: 100, MinOverlap: 50, TopPeers: 8}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	mkt := walk(n, 1)
	var series, peers []Asset
	for i := range m {
		s := walk(n, uint64(100+i))
		beta := 2 * rng.Float64()
		for t := 1; t < n; t++ {
			s.Close[t] = s.Close[t-1] * math.Pow(mkt.Close[t]/mkt.Close[t-1], beta) * (1 + 0.01*rng.NormFloat64())
		}
		s.High, s.Low = nil, nil
		id := string(rune('A' + i))
		switch i {
		case 5: // constant: no dispersion, as a series and as a peer
			for t := range s.Close {
				s.Close[t] = 10
			}
		}
		peer := Asset{ID: id, Symbol: "S" + id, Bars: ohlcv.Series{Dates: s.Dates, Close: s.Close}}
		switch i {
		case 7: // the peer has a gap in the window: off the calendar
			peer.Bars = ohlcv.Series{Dates: slices.Delete(slices.Clone(s.Dates), n-10, n-9), Close: slices.Delete(slices.Clone(s.Close), n-10, n-9)}
		case 9: // the peer's closes differ from the series': no twin
			c := slices.Clone(s.Close)
			c[n-3] *= 1.01
			peer.Bars.Close = c
		}
		peers = append(peers, peer)
		sid := id
		if i == 11 {
			sid = "" // no ID: not a twin, nothing left out
		}
		series = append(series, Asset{ID: sid, Bars: s})
		if i == 13 {
			series = append(series, Asset{ID: sid, Bars: s}) // twice
		}
	}
	u, err := NewUniverse(peers)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range []int{7, corrBlock} {
		d := u.denseBlocks(series, cfg, 3, block)
		for i, s := range series {
			a, err := newAsset(s.Bars, cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := u.correlationsSkipping(a, s.ID, cfg, nil)
			got := u.correlationsFor(a, s.ID, cfg, d, i)
			if len(got) != len(want) {
				t.Fatalf("block %d, series %d: %d correlations, want %d", block, i, len(got), len(want))
			}
			for j := range want {
				if got[j].AssetID != want[j].AssetID || math.Abs(got[j].Correlation-want[j].Correlation) > 1e-9 {
					t.Errorf("block %d, series %d, rank %d: %+v, want %+v", block, i, j, got[j], want[j])
				}
			}
			if !d.on[i] {
				t.Errorf("series %d is off the calendar", i)
			}
		}
	}
}
