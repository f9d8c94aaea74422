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
// windows, in blocks of 256 series; a series or peer with a gap in that
// window, or dates past it, is merged pair by pair as Compute does. The
// rest of each profile is computed once per series, on the workers.
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
	k := cfg.CorrWindow
	d := &denseCorr{peer: make([]bool, len(u.peers)), top: make([][]Correlation, len(series)), on: make([]bool, len(series))}
	cal := u.calendar(k + 1)
	if cal == nil {
		return d
	}
	// The peers on the calendar, standardised, one row each.
	var pidx []int
	for pi := range u.peers {
		p := &u.peers[pi]
		if len(p.days) >= k+1 && slices.Equal(p.days[len(p.days)-k-1:], cal) {
			d.peer[pi] = true
			pidx = append(pidx, pi)
		}
	}
	z := make([]float64, len(pidx)*k)
	moves := make([]bool, len(pidx))
	for r, pi := range pidx {
		p := &u.peers[pi]
		moves[r] = standardise(z[r*k:(r+1)*k], p.logc[len(p.logc)-k-1:])
	}
	// The series on the calendar, standardised the same way.
	var sidx []int
	for i := range series {
		if seriesWindow(series[i], cal) != nil {
			d.on[i] = true
			sidx = append(sidx, i)
		}
	}
	peers := blas64.General{Rows: len(pidx), Cols: k, Stride: k, Data: z}
	x := make([]float64, min(corrBlock, len(sidx))*k)
	c := make([]float64, min(corrBlock, len(sidx))*len(pidx))
	for lo := 0; lo < len(sidx); lo += corrBlock {
		block := sidx[lo:min(lo+corrBlock, len(sidx))]
		sMoves := make([]bool, len(block))
		for r, i := range block {
			closes := seriesWindow(series[i], cal)
			logc := make([]float64, len(closes))
			for t, v := range closes {
				logc[t] = math.Log(v)
			}
			sMoves[r] = standardise(x[r*k:(r+1)*k], logc)
		}
		xs := blas64.General{Rows: len(block), Cols: k, Stride: k, Data: x[:len(block)*k]}
		cs := blas64.General{Rows: len(block), Cols: len(pidx), Stride: len(pidx), Data: c[:len(block)*len(pidx)]}
		if len(pidx) > 0 {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, xs, peers, 0, cs)
		}
		rank := func(r int) {
			i := block[r]
			top := make([]Correlation, 0, cfg.TopPeers+1)
			if sMoves[r] {
				id := series[i].ID
				row := cs.Data[r*cs.Stride : r*cs.Stride+len(pidx)]
				for q, v := range row {
					p := &u.peers[pidx[q]]
					if !moves[q] || (id != "" && p.id == id) || math.IsNaN(v) || math.IsInf(v, 0) {
						continue
					}
					top = insertTop(top, Correlation{AssetID: p.id, Symbol: p.symbol, Correlation: clampCorr(v)}, cfg.TopPeers)
				}
			}
			d.top[i] = top
		}
		parallel(len(block), workers, func(_, r int) { rank(r) })
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
