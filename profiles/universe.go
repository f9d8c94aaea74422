package profiles

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/tradekit/tradekit"
)

// Universe is the set of peers that assets are correlated against, with
// their dates and log closes prepared once. It is immutable, and safe for
// concurrent use by several goroutines calling [Universe.Compute].
type Universe struct {
	peers []peerSeries
}

type peerSeries struct {
	id, symbol string
	days       []int32   // civil days, strictly ascending
	logc       []float64 // ln close on those days
}

// NewUniverse prepares peers for correlations. Closes that are not finite
// and above zero are dropped as missing days. NewUniverse returns an error
// wrapping [tradekit.ErrInvalid] if a peer's dates and closes differ in
// length or its dates are not strictly ascending. A nil or empty peers
// gives an empty universe: profiles then have no correlations.
func NewUniverse(peers []Asset) (*Universe, error) {
	return newUniverse(peers, math.MinInt32)
}

// newUniverse is NewUniverse keeping only the days from fromDay on (found
// by binary search, assuming ascending dates; only the kept part is checked).
func newUniverse(peers []Asset, fromDay int32) (*Universe, error) {
	u := &Universe{peers: make([]peerSeries, 0, len(peers))}
	for _, p := range peers {
		dates, closes := p.Bars.Dates, p.Bars.Close
		if len(dates) != len(closes) {
			return nil, fmt.Errorf("profiles: peer %s (%s) has %d dates but %d closes: %w",
				p.Symbol, p.ID, len(dates), len(closes), tradekit.ErrInvalid)
		}
		first := 0
		if fromDay != math.MinInt32 {
			first = sort.Search(len(dates), func(i int) bool { return dayNumber(dates[i]) >= fromDay })
		}
		ps := peerSeries{id: p.ID, symbol: p.Symbol,
			days: make([]int32, 0, len(dates)-first), logc: make([]float64, 0, len(dates)-first)}
		prev := int32(math.MinInt32)
		for i := first; i < len(dates); i++ {
			d := dates[i]
			day := dayNumber(d)
			if day <= prev {
				return nil, fmt.Errorf("profiles: peer %s (%s): date %s at index %d is not after the one before: %w",
					p.Symbol, p.ID, d, i, tradekit.ErrInvalid)
			}
			prev = day
			if c := closes[i]; c > 0 && !math.IsInf(c, 0) {
				ps.days = append(ps.days, day)
				ps.logc = append(ps.logc, math.Log(c))
			}
		}
		u.peers = append(u.peers, ps)
	}
	return u, nil
}

// Len returns the number of peers in u.
func (u *Universe) Len() int { return len(u.peers) }

// minDailySD is the daily return standard deviation below which a series
// is taken as moving by a constant factor (no dispersion to correlate).
const minDailySD = 1e-10

// correlationsSkipping ranks the peers by the correlation of daily log
// returns on common dates over the asset's last cfg.CorrWindow returns
// (see the package documentation), merging the dates pair by pair. Peers
// pi with skip[pi] are left out (skip may be nil).
func (u *Universe) correlationsSkipping(a *asset, selfID string, cfg Config, skip []bool) []Correlation {
	k := min(cfg.CorrWindow, a.n-1)
	first := a.corrStart(cfg)
	wDays := a.days[first:]
	wLog := a.logc[first:]
	x := make([]float64, 0, k)
	y := make([]float64, 0, k)
	out := make([]Correlation, 0, cfg.TopPeers+1)
	for pi := range u.peers {
		p := &u.peers[pi]
		if (selfID != "" && p.id == selfID) || (skip != nil && skip[pi]) {
			continue
		}
		j := sort.Search(len(p.days), func(i int) bool { return p.days[i] >= wDays[0] })
		if len(p.days)-j < cfg.MinOverlap+1 {
			continue
		}
		x, y = x[:0], y[:0]
		prevA, prevP := math.NaN(), math.NaN()
		for i := 0; i < len(wDays) && j < len(p.days); {
			switch {
			case wDays[i] < p.days[j]:
				i++
			case wDays[i] > p.days[j]:
				j++
			default:
				if !math.IsNaN(prevA) {
					x = append(x, wLog[i]-prevA)
					y = append(y, p.logc[j]-prevP)
				}
				prevA, prevP = wLog[i], p.logc[j]
				i++
				j++
			}
		}
		if len(x) < cfg.MinOverlap || stat.StdDev(x, nil) < minDailySD || stat.StdDev(y, nil) < minDailySD {
			continue
		}
		c := stat.Correlation(x, y, nil)
		if math.IsNaN(c) || math.IsInf(c, 0) {
			continue
		}
		out = insertTop(out, Correlation{AssetID: p.id, Symbol: p.symbol, Correlation: c}, cfg.TopPeers)
	}
	return out
}

// insertTop inserts c into top, kept sorted by correlation descending (then
// by asset id), and trims it to at most n entries.
func insertTop(top []Correlation, c Correlation, n int) []Correlation {
	if len(top) == n && n > 0 && c.Correlation < top[n-1].Correlation {
		return top // below the last kept: what the check below finds, without its closure
	}
	less := func(p, q Correlation) int {
		if v := cmp.Compare(q.Correlation, p.Correlation); v != 0 {
			return v
		}
		return cmp.Compare(p.AssetID, q.AssetID)
	}
	if len(top) == n && less(c, top[n-1]) >= 0 {
		return top
	}
	i, _ := slices.BinarySearchFunc(top, c, less)
	top = slices.Insert(top, i, c)
	if len(top) > n {
		top = top[:n]
	}
	return top
}
