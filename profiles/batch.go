package profiles

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/stat"
)

// corrBlock is the number of assets whose correlations with every dense
// peer one matrix product computes: it bounds the product's memory to
// corrBlock × peers float64s (20 MB for 10,000 peers).
const corrBlock = 256

// ComputeAll computes the profile of every series against u, each equal
// to what [Universe.Compute] gives it (correlations within 1e-9), and
// calls each with the index of the series in series and its profile, or
// the error Compute would have returned. each is called from up to
// workers goroutines at once (runtime.GOMAXPROCS(0) when workers <= 0),
// once per series, in no particular order, until it returns false: no
// series is started after that. ComputeAll returns when every call has
// returned. It returns an error wrapping
// [github.com/tradekit/tradekit.ErrInvalid], before any call, if cfg is
// out of range.
//
// The correlations of the series and peers that trade on the universe's
// calendar (the last CorrWindow+1 dates that most peers share, with a
// close on each) are one matrix product of their standardised return
// windows, in blocks of 256 series, each pair of series that are also
// peers (same ID and window) multiplied once; a series or peer with a gap
// in that window, or dates past it, is merged pair by pair as Compute
// does. The rest of each profile is computed once per series, on the
// workers, each reusing its buffers from one series to the next.
func (u *Universe) ComputeAll(series []Asset, cfg Config, workers int, each func(i int, p Profile, err error) bool) error {
	cfg, err := cfg.resolve()
	if err != nil {
		return err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	d := u.dense(series, cfg, workers)
	var stop atomic.Bool
	scs := make([]scratch, workers) // one a worker
	parallel(len(series), workers, func(w, i int) {
		if stop.Load() {
			return
		}
		var p Profile
		sc := &scs[w]
		sc.reset()
		a, err := newAssetIn(series[i].Bars, cfg, sc)
		if err == nil {
			p = u.profileWith(a, series[i].ID, cfg, d, i)
		}
		if !each(i, p, err) {
			stop.Store(true)
		}
	})
	return nil
}

// denseCorr is what [Universe.ComputeAll] computes of the correlations
// before the rest of the profiles: the calendar window, which peers trade
// on it, and each dense series' ranked correlations with them.
type denseCorr struct {
	peer []bool          // by peer of u: on the calendar
	top  [][]Correlation // by series: ranked dense peers; nil for a series off the calendar
	on   []bool          // by series: on the calendar
}

// profileWith is [Universe.profile], taking the correlations of a dense
// series from d and merging only the other peers pair by pair.
func (u *Universe) profileWith(a *asset, id string, cfg Config, d *denseCorr, i int) Profile {
	p := profileBase(a, cfg)
	p.Correlations = u.correlationsFor(a, id, cfg, d, i)
	return p
}

// correlationsFor returns the correlations of a, series i of d's batch:
// those with the dense peers from d when the series is on the calendar,
// merged with the other peers pair by pair.
func (u *Universe) correlationsFor(a *asset, id string, cfg Config, d *denseCorr, i int) []Correlation {
	if !d.on[i] {
		return u.correlationsSkipping(a, id, cfg, nil)
	}
	top := u.correlationsSkipping(a, id, cfg, d.peer)
	for _, c := range d.top[i] {
		top = insertTop(top, c, cfg.TopPeers)
	}
	return top
}

// dense finds the universe's calendar window for cfg and computes the
// ranked correlations of every series on it with every peer on it.
func (u *Universe) dense(series []Asset, cfg Config, workers int) *denseCorr {
	return u.denseBlocks(series, cfg, workers, corrBlock)
}

// denseBlocks is dense with products of block rows at a time.
//
// A series whose window is that of the peer with its ID (the universe of
// a market is its own assets) is that peer's twin: its standardised row
// is the peer's row, so its correlation with another twin is the one the
// other twin has with it. The twins' rows come first in the matrix of
// peers, and the product of the twins in rows lo… of a block with the
// rows from lo on (twins, then every other peer) gives both the block's
// rows (every peer from lo on) and, read down its columns, the rows of
// the twins after the block (their correlations with the block): each
// pair of twins is multiplied once rather than twice, which halves the
// product when every series is a twin. The other series are multiplied
// by every peer as before.
func (u *Universe) denseBlocks(series []Asset, cfg Config, workers, block int) *denseCorr {
	k := cfg.CorrWindow
	d := &denseCorr{peer: make([]bool, len(u.peers)), top: make([][]Correlation, len(series)), on: make([]bool, len(series))}
	cal := u.calendar(k + 1)
	if cal == nil {
		return d
	}
	// The peers on the calendar, by their first ID.
	var pidx []int
	byID := map[string]int{} // ID → position in pidx
	for pi := range u.peers {
		p := &u.peers[pi]
		if len(p.days) >= k+1 && slices.Equal(p.days[len(p.days)-k-1:], cal) {
			d.peer[pi] = true
			if _, dup := byID[p.id]; !dup && p.id != "" {
				byID[p.id] = len(pidx)
			}
			pidx = append(pidx, pi)
		}
	}
	// The series on the calendar: twins, by the position of their peer,
	// and the others.
	twinOf := make([]int, len(pidx)) // series index of each peer's twin, -1 for none
	for q := range twinOf {
		twinOf[q] = -1
	}
	var twins, others []int // positions in pidx; series indexes
	logc := make([]float64, k+1)
	for i := range series {
		closes := seriesWindow(series[i], cal)
		if closes == nil {
			continue
		}
		d.on[i] = true
		if q, ok := byID[series[i].ID]; ok && twinOf[q] < 0 {
			p := &u.peers[pidx[q]]
			for t, v := range closes {
				logc[t] = math.Log(v)
			}
			if slices.Equal(logc, p.logc[len(p.logc)-k-1:]) {
				twinOf[q] = i
				twins = append(twins, q)
				continue
			}
		}
		others = append(others, i)
	}
	// The rows of the peers, standardised: twins first.
	rows := slices.Clone(twins) // positions in pidx, by row
	for q := range pidx {
		if twinOf[q] < 0 {
			rows = append(rows, q)
		}
	}
	z := make([]float64, len(rows)*k)
	moves := make([]bool, len(rows))
	for r, q := range rows {
		p := &u.peers[pidx[q]]
		moves[r] = standardise(z[r*k:(r+1)*k], p.logc[len(p.logc)-k-1:])
	}
	// feed adds row q's peer, at correlation v, to the ranking top of the
	// series with ID id.
	feed := func(top []Correlation, id string, q int, v float64) []Correlation {
		p := &u.peers[pidx[rows[q]]]
		if !moves[q] || (id != "" && p.id == id) || math.IsNaN(v) || math.IsInf(v, 0) {
			return top
		}
		return insertTop(top, Correlation{AssetID: p.id, Symbol: p.symbol, Correlation: clampCorr(v)}, cfg.TopPeers)
	}
	c := make([]float64, min(block, max(len(twins), len(others)))*len(rows))

	// The twins, a block of rows at a time.
	nt := len(twins)
	for r := range nt {
		if moves[r] {
			d.top[twinOf[rows[r]]] = make([]Correlation, 0, cfg.TopPeers+1)
		}
	}
	for lo := 0; lo < nt; lo += block {
		hi := min(lo+block, nt)
		w := len(rows) - lo // columns: the rows from lo on
		a := blas64.General{Rows: hi - lo, Cols: k, Stride: k, Data: z[lo*k : hi*k]}
		b := blas64.General{Rows: w, Cols: k, Stride: k, Data: z[lo*k:]}
		cs := blas64.General{Rows: hi - lo, Cols: w, Stride: w, Data: c[:(hi-lo)*w]}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, cs)
		// The block's own rows: every peer from lo on.
		parallel(hi-lo, workers, func(_, r int) {
			i := twinOf[rows[lo+r]]
			if !moves[lo+r] {
				return
			}
			top, id := d.top[i], series[i].ID
			for j, v := range cs.Data[r*w : (r+1)*w] {
				top = feed(top, id, lo+j, v)
			}
			d.top[i] = top
		})
		// The twins after the block, down the columns: their
		// correlations with the block's rows, columns a chunk at a time.
		const chunk = 64
		parallel((nt-hi+chunk-1)/chunk, workers, func(_, ch int) {
			from, to := hi+ch*chunk, min(hi+(ch+1)*chunk, nt)
			for r := range hi - lo {
				row := cs.Data[r*w : (r+1)*w]
				for g := from; g < to; g++ {
					if !moves[g] {
						continue
					}
					i := twinOf[rows[g]]
					d.top[i] = feed(d.top[i], series[i].ID, lo+r, row[g-lo])
				}
			}
		})
	}

	// The other series, standardised the same way, against every peer.
	peers := blas64.General{Rows: len(rows), Cols: k, Stride: k, Data: z}
	x := make([]float64, min(block, len(others))*k)
	for lo := 0; lo < len(others); lo += block {
		blk := others[lo:min(lo+block, len(others))]
		sMoves := make([]bool, len(blk))
		for r, i := range blk {
			for t, v := range seriesWindow(series[i], cal) {
				logc[t] = math.Log(v)
			}
			sMoves[r] = standardise(x[r*k:(r+1)*k], logc)
		}
		xs := blas64.General{Rows: len(blk), Cols: k, Stride: k, Data: x[:len(blk)*k]}
		cs := blas64.General{Rows: len(blk), Cols: len(rows), Stride: len(rows), Data: c[:len(blk)*len(rows)]}
		if len(rows) > 0 {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, xs, peers, 0, cs)
		}
		parallel(len(blk), workers, func(_, r int) {
			i := blk[r]
			top := make([]Correlation, 0, cfg.TopPeers+1)
			if sMoves[r] {
				id := series[i].ID
				for q, v := range cs.Data[r*cs.Stride : r*cs.Stride+len(rows)] {
					top = feed(top, id, q, v)
				}
			}
			d.top[i] = top
		})
	}
	return d
}

// parallel calls f(w, 0) … f(w, n-1) on up to workers goroutines, w
// being the number, from 0, of the goroutine that makes the call: calls
// with the same w never run at once.
func parallel(n, workers int, f func(w, i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(w, i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// clampCorr keeps a correlation computed as a dot product of unit vectors
// within [-1, 1], which rounding may pass by an ulp.
func clampCorr(v float64) float64 { return max(-1, min(1, v)) }

// standardise writes to dst the daily log returns of logc (len(dst)+1 log
// closes), centred and scaled to unit length, so that the dot product of
// two such rows is the Pearson correlation of their returns. It reports
// whether the returns move: a sample standard deviation of at least
// minDailySD (dst is then all zero), as the pairwise merge requires.
func standardise(dst, logc []float64) bool {
	for t := range dst {
		dst[t] = logc[t+1] - logc[t]
	}
	if stat.StdDev(dst, nil) < minDailySD {
		clear(dst)
		return false
	}
	m := stat.Mean(dst, nil)
	var ss float64
	for t := range dst {
		dst[t] -= m
		ss += dst[t] * dst[t]
	}
	inv := 1 / math.Sqrt(ss)
	for t := range dst {
		dst[t] *= inv
	}
	return true
}

// calendar returns the universe's calendar window of n days: the last n
// day numbers that most peers end with (ties to the latest), or nil when
// no two peers share them.
func (u *Universe) calendar(n int) []int32 {
	seed := maphash.MakeSeed()
	type group struct {
		days  []int32
		count int
	}
	groups := map[uint64][]*group{}
	var best *group
	var buf []byte
	for pi := range u.peers {
		p := &u.peers[pi]
		if len(p.days) < n {
			continue
		}
		w := p.days[len(p.days)-n:]
		buf = buf[:0]
		for _, v := range w {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
		}
		key := maphash.Bytes(seed, buf)
		var g *group
		for _, c := range groups[key] {
			if slices.Equal(c.days, w) {
				g = c
				break
			}
		}
		if g == nil {
			g = &group{days: w}
			groups[key] = append(groups[key], g)
		}
		g.count++
		if best == nil || g.count > best.count || (g.count == best.count && g.days[n-1] > best.days[n-1]) {
			best = g
		}
	}
	if best == nil || best.count < 2 {
		return nil
	}
	return best.days
}

// seriesWindow returns the closes of s on the calendar window cal when s
// ends with exactly cal's dates and has a positive finite close on each,
// and nil otherwise.
func seriesWindow(s Asset, cal []int32) []float64 {
	n := len(cal)
	dates, closes := s.Bars.Dates, s.Bars.Close
	if len(dates) < n || len(closes) != len(dates) {
		return nil
	}
	dates, closes = dates[len(dates)-n:], closes[len(closes)-n:]
	for t, d := range dates {
		if dayNumber(d) != cal[t] {
			return nil
		}
		if c := closes[t]; !(c > 0) || math.IsInf(c, 0) {
			return nil
		}
	}
	return closes
}
