package profiles

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"sync/atomic"

	"gonum.org/v1/gonum/stat"
)

// stateFormat is the first byte of an encoded [State]; a State of another
// format does not decode, and its asset is computed in full. Change it
// whenever a field is added or changes meaning, or the method of a
// statistic the state continues changes: stored states of the old format
// are then ignored once, not misread.
const stateFormat = 1

// State is what the profile of an asset leaves for the next day's update
// (see "Incremental updates" in the package documentation): the number
// of bars and a hash of them, the parameters, the regime state machine
// with its runs, the running sums of the strategies, of the oscillators'
// threshold grids and of the seasonality. A State is returned by
// [Universe.ComputeAllFrom] and given back to it, in its binary form
// ([State.MarshalBinary]) in between if need be.
type State struct {
	cfg    uint64 // hash of the resolved Config
	n      int    // bars
	hash   uint64 // of the n bars' dates, closes, highs and lows
	regime Regime // hysteresis state at the last bar
	runs   []run  // merged runs before the last raw run
	raw    run    // the last raw run, ongoing
	strat  [4]strategySums
	grids  [oscillators]gridSums
	season seasonSums
}

// configHash returns a hash of the resolved cfg.
func configHash(cfg Config) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%+v", cfg)
	return h.Sum64()
}

// historyHashes returns hashes of a's first n-1 bars and of all n of
// them (dates, closes, highs and lows, bit for bit), in one pass: FNV-1a
// is a stream, so the second continues the first, and the bytes are
// written a chunk of bars at a time.
func historyHashes(a *asset) (prefix, all uint64) {
	const bar = 28 // bytes a bar
	h := fnv.New64a()
	var buf [bar * 128]byte
	b := buf[:0]
	for t := range a.n {
		if t == a.n-1 {
			h.Write(b)
			prefix = h.Sum64()
			b = b[:0]
		} else if len(b) == len(buf) {
			h.Write(b)
			b = b[:0]
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(a.days[t]))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(a.close[t]))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(a.high[t]))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(a.low[t]))
	}
	h.Write(b)
	return prefix, h.Sum64()
}

// follows reports whether a series whose first n-1 bars hash to prefix
// is the series prev was computed from plus one bar, under the same cfg.
func (prev *State) follows(n int, prefix, cfgHash uint64) bool {
	return prev != nil && prev.cfg == cfgHash && prev.n == n-1 && prev.hash == prefix
}

// profileState returns the profile of a without its correlations, and
// its state: updated from prev with a's last bar when a is prev's series
// plus one bar under cfg (incremental reports it), computed in full
// otherwise.
func profileState(a *asset, cfg Config, prev *State) (p Profile, next *State, incremental bool) {
	ch := configHash(cfg)
	prefix, all := historyHashes(a)
	next = &State{cfg: ch, n: a.n, hash: all}
	vol := rollingVolInto(a.sc.floats(a.n), a.ret, cfg.VolWindow)
	if !prev.follows(a.n, prefix, ch) {
		// profileBase, keeping the state of each part on the way.
		labels, start := rawRegimes(a, vol, cfg)
		from := a.n - 1
		for from > start && labels[from-1] == labels[a.n-1] {
			from--
		}
		next.regime = labels[a.n-1]
		next.runs = mergeShortRuns(labels[:from], start, cfg.MinRun)
		next.raw = run{labels[a.n-1], from, a.n - 1}
		affinityFrom(a, nil, &next.strat)
		next.season.addDays(a, 0)
		p = Profile{
			AsOf:                 a.dates[a.n-1],
			Regimes:              regimesOf(a, mergeShortRuns(labels, start, cfg.MinRun)),
			StrategyAffinity:     affinity(a),
			IndicatorSensitivity: sensitivityFrom(a, cfg, nil, &next.grids),
			Volatility:           volatility(vol),
			Seasonality:          next.season.seasonality(a, cfg),
		}
		return p, next, false
	}

	// The volatility readings: the share at or below today's (stat.CDF's
	// empirical count, w/len(hist) with w counted in whole numbers, so the
	// same bits, without sorting), and the median of the regime rule,
	// selected in place.
	hist := a.sc.floats(a.n)[:0]
	for _, v := range vol {
		if !math.IsNaN(v) {
			hist = append(hist, v)
		}
	}
	cur := hist[len(hist)-1]
	tail := func(k int) float64 { return stat.Mean(hist[max(0, len(hist)-k):], nil) }
	avg30, avg90 := tail(30), tail(90)
	q, below := cur*(1+pctTol), 0
	for _, v := range hist {
		if v <= q {
			below++
		}
	}
	p.Volatility = Volatility{Current: cur, Avg30d: avg30, Avg90d: avg90,
		Percentile: 100 * (float64(below) / float64(len(hist)))}

	t := a.n - 1
	med := medianInPlace(hist)
	ratio := volRatio(cur, med, len(hist), cfg)
	next.regime = nextRegime(prev.regime, ratio, trendAt(a, cfg.TrendWindow, t), cfg)
	next.runs = slices.Clone(prev.runs)
	next.raw = prev.raw
	if next.regime == prev.raw.regime {
		next.raw.to = t
	} else {
		next.runs = appendRun(next.runs, prev.raw, cfg.MinRun)
		next.raw = run{next.regime, t, t}
	}
	p.Regimes = regimesOf(a, appendRun(slices.Clone(next.runs), next.raw, cfg.MinRun))

	p.AsOf = a.dates[t]
	p.StrategyAffinity = affinityFrom(a, &prev.strat, &next.strat)
	p.IndicatorSensitivity = sensitivityFrom(a, cfg, &prev.grids, &next.grids)
	next.season = prev.season
	next.season.addDays(a, prev.season.upTo+1)
	p.Seasonality = next.season.seasonality(a, cfg)
	return p, next, true
}

// medianInPlace returns the median of x, reordering it: the middle value
// of x sorted, or the mean of the two middle ones, as [medianTracker]
// gives it. x must hold no NaN and not be empty.
func medianInPlace(x []float64) float64 {
	k := len(x)
	selectKth(x, k/2)
	med := x[k/2]
	if k%2 == 0 {
		med = (slices.Max(x[:k/2]) + med) / 2 // the greatest value before the k/2-th is the one sorting puts before it
	}
	return med
}

// ComputeAllFrom is [Universe.ComputeAll] carrying a [State] per series
// from one day to the next: states[i], when not nil, is the state the
// profile of series[i] left before its last bar. A series that is its
// state's series plus one bar, under the same cfg, is updated from it
// (incremental true): the statistics that allow it continue from their
// running sums and state machine, and the rest are computed over the
// series (see "Incremental updates" in the package documentation). Any
// other series (no state, a bar inserted or changed in the past, as an
// adjustment for a split does, more than one new bar, another cfg) is
// computed in full. Either way the profile equals ComputeAll's within
// 1e-9, and each gets the state for the next update. states may be nil;
// it is not modified, and ComputeAllFrom panics if it is not nil and its
// length is not series'. Its errors and calls of each are ComputeAll's.
func (u *Universe) ComputeAllFrom(series []Asset, states []*State, cfg Config, workers int,
	each func(i int, p Profile, next *State, incremental bool, err error) bool) error {
	cfg, err := cfg.resolve()
	if err != nil {
		return err
	}
	if states != nil && len(states) != len(series) {
		panic("profiles: ComputeAllFrom with states and series of different lengths")
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
		var next *State
		var inc bool
		sc := &scs[w]
		sc.reset()
		a, err := newAssetIn(series[i].Bars, cfg, sc)
		if err == nil {
			var prev *State
			if states != nil {
				prev = states[i]
			}
			p, next, inc = profileState(a, cfg, prev)
			p.Correlations = u.correlationsFor(a, series[i].ID, cfg, d, i)
		}
		if !each(i, p, next, inc, err) {
			stop.Store(true)
		}
	})
	return nil
}

// errState is the error of [State.UnmarshalBinary].
var errState = errors.New("profiles: not an encoded profile state")

// MarshalBinary returns the state's binary form, versioned: a format
// byte, then little-endian fields. It never fails.
func (s *State) MarshalBinary() ([]byte, error) {
	w := stateWriter{b: []byte{stateFormat}}
	w.u64(s.cfg)
	w.int(s.n)
	w.u64(s.hash)
	w.str(string(s.regime))
	w.int(len(s.runs))
	for _, r := range append(slices.Clip(s.runs), s.raw) {
		w.str(string(r.regime))
		w.int(r.from)
		w.int(r.to)
	}
	for _, ss := range s.strat {
		w.f64(ss.s)
		w.f64(ss.q)
		w.int(ss.k)
	}
	for _, g := range s.grids {
		w.int(g.n)
		for _, l := range [][]sums{g.ls, g.ss} {
			w.int(len(l))
			for _, v := range l {
				w.f64(v.s)
				w.f64(v.q)
			}
		}
	}
	se := &s.season
	for m := range se.monthSum {
		w.f64(se.monthSum[m])
		w.int(se.monthN[m])
	}
	for d := range se.daySum {
		w.f64(se.daySum[d])
		w.int(se.dayN[d])
	}
	w.int(se.prevEnd)
	w.int(se.upTo)
	return w.b, nil
}

// UnmarshalBinary decodes a state written by [State.MarshalBinary]. It
// returns an error for data of another format or not whole; the asset's
// next profile is then computed in full.
func (s *State) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != stateFormat {
		return errState
	}
	r := stateReader{b: b[1:]}
	var out State
	out.cfg = r.u64()
	out.n = r.int()
	out.hash = r.u64()
	out.regime = Regime(r.str())
	nr := r.int()
	if nr < 0 || nr > len(b) {
		return errState
	}
	for i := range nr + 1 {
		x := run{regime: Regime(r.str()), from: r.int(), to: r.int()}
		if i < nr {
			out.runs = append(out.runs, x)
		} else {
			out.raw = x
		}
	}
	for i := range out.strat {
		out.strat[i] = strategySums{s: r.f64(), q: r.f64(), k: r.int()}
	}
	for i := range out.grids {
		g := &out.grids[i]
		g.n = r.int()
		for _, l := range []*[]sums{&g.ls, &g.ss} {
			k := r.int()
			if k < 0 || k > len(b) {
				return errState
			}
			*l = make([]sums, k)
			for j := range *l {
				(*l)[j] = sums{s: r.f64(), q: r.f64()}
			}
		}
	}
	se := &out.season
	for m := range se.monthSum {
		se.monthSum[m], se.monthN[m] = r.f64(), r.int()
	}
	for d := range se.daySum {
		se.daySum[d], se.dayN[d] = r.f64(), r.int()
	}
	se.prevEnd, se.upTo = r.int(), r.int()
	if r.bad || len(r.b) != 0 || !validState(&out) {
		return errState
	}
	*s = out
	return nil
}

// validState reports whether a decoded state's indexes are consistent,
// so that a corrupt one is not believed.
func validState(s *State) bool {
	if s.n < 1 || s.raw.from < 0 || s.raw.from > s.raw.to || s.raw.to != s.n-1 || s.season.upTo != s.n-1 || s.season.prevEnd >= s.n {
		return false
	}
	for _, r := range s.runs {
		if r.from < 0 || r.from > r.to || r.to >= s.raw.from {
			return false
		}
	}
	for _, g := range s.grids {
		if len(g.ls) != len(grid0to100(Thresholds{}).oversold) && len(g.ls) != len(cciGrid.oversold) {
			return false
		}
		if len(g.ss) != len(g.ls) {
			return false
		}
	}
	return true
}

type stateWriter struct{ b []byte }

func (w *stateWriter) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *stateWriter) int(v int)    { w.b = binary.AppendVarint(w.b, int64(v)) }
func (w *stateWriter) f64(v float64) {
	w.u64(math.Float64bits(v))
}
func (w *stateWriter) str(v string) {
	w.int(len(v))
	w.b = append(w.b, v...)
}

type stateReader struct {
	b   []byte
	bad bool
}

func (r *stateReader) u64() uint64 {
	if len(r.b) < 8 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *stateReader) int() int {
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return int(v)
}

func (r *stateReader) f64() float64 { return math.Float64frombits(r.u64()) }

func (r *stateReader) str() string {
	k := r.int()
	if k < 0 || k > len(r.b) {
		r.bad = true
		return ""
	}
	s := string(r.b[:k])
	r.b = r.b[k:]
	return s
}
