package profiles

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat"

	"github.com/tradekit/tradekit/indicators"
)

// Indicator keys of [Profile.IndicatorSensitivity].
const (
	IndicatorRSI      = "RSI"       // RSI(14), contrarian: -RSI
	IndicatorMACD     = "MACD"      // MACD(12,26,9) histogram / close
	IndicatorBB       = "BB"        // Bollinger(20,2) %b, contrarian: -%b
	IndicatorSMACross = "SMA_CROSS" // SMA(50)/SMA(200) - 1
	IndicatorStoch    = "STOCH"     // slow Stochastic %K(14,3,3), contrarian
	IndicatorWillR    = "WILLR"     // Williams %R(14), contrarian
	IndicatorCCI      = "CCI"       // CCI(20), contrarian
	IndicatorROC      = "ROC"       // ROC(20), momentum
)

// minPairs is the fewest (signal, forward return) pairs a predictive score
// needs; below it the score is 0.
const minPairs = 30

// grid is the search space of an oscillator's thresholds.
type grid struct {
	oversold, overbought []float64
	conventional         Thresholds // the textbook pair, tried first
}

func steps(from, to, step float64) []float64 {
	var out []float64
	for v := from; v <= to+1e-9; v += step {
		out = append(out, v)
	}
	return out
}

var (
	grid0to100 = func(conv Thresholds) grid {
		return grid{steps(10, 45, 5), steps(55, 90, 5), conv}
	}
	willRGrid = grid{steps(-90, -55, 5), steps(-45, -10, 5), Thresholds{-80, -20}}
	cciGrid   = grid{steps(-250, -50, 25), steps(50, 250, 25), Thresholds{-100, 100}}
)

// sensitivity scores each indicator (see the package documentation).
func sensitivity(a *asset, cfg Config) map[string]Sensitivity {
	return sensitivityFrom(a, cfg, nil, nil)
}

// oscillators is the number of indicators with optimal thresholds, whose
// grid sums a [State] keeps (RSI, STOCH, WILLR, CCI, in that order).
const oscillators = 4

// sensitivityFrom is [sensitivity] taking the oscillators' threshold grid
// sums over the days before a's last from prev when not nil (adding only
// the term of the day before the last), and leaving the sums over every
// day in next when not nil.
func sensitivityFrom(a *asset, cfg Config, prev, next *[oscillators]gridSums) map[string]Sensitivity {
	fwd := make([]float64, a.n)
	for t := range fwd {
		if t+cfg.Horizon < a.n {
			fwd[t] = a.logc[t+cfg.Horizon] - a.logc[t]
		} else {
			fwd[t] = math.NaN()
		}
	}
	out := make(map[string]Sensitivity, 8)
	fo := newFwdOrder(fwd)
	osc := 0 // index of the next oscillator
	score := func(name string, sig []float64, orient float64, x []float64, g *grid) {
		ic := orient * fo.rankIC(sig)
		if ic == 0 {
			ic = 0 // no negative zero in JSON
		}
		s := Sensitivity{PredictiveScore: ic}
		if g != nil {
			var gs gridSums
			if prev != nil {
				gs = prev[osc].clone()
				gs.add(x, a.ret, *g, a.n-2)
			} else {
				gs = newGridSums(*g)
				for t := 0; t < a.n-1; t++ {
					gs.add(x, a.ret, *g, t)
				}
			}
			if next != nil {
				next[osc] = gs
			}
			th := gs.best(*g)
			s.OptimalThresholds = &th
			osc++
		}
		out[name] = s
	}

	rsi := indicators.RSI(a.close, 14)
	g := grid0to100(Thresholds{30, 70})
	score(IndicatorRSI, rsi, -1, rsi, &g)

	_, _, hist := indicators.MACD(a.close, 12, 26, 9)
	for t := range hist {
		hist[t] /= a.close[t]
	}
	score(IndicatorMACD, hist, 1, nil, nil)

	up, _, lo := indicators.BollingerBands(a.close, 20, 2)
	pb := make([]float64, a.n)
	for t := range pb {
		if w := up[t] - lo[t]; w > 0 {
			pb[t] = (a.close[t] - lo[t]) / w
		} else if math.IsNaN(w) {
			pb[t] = math.NaN()
		} else {
			pb[t] = 0.5
		}
	}
	score(IndicatorBB, pb, -1, nil, nil)

	fast, slow := indicators.SMA(a.close, 50), indicators.SMA(a.close, 200)
	cross := make([]float64, a.n)
	for t := range cross {
		cross[t] = fast[t]/slow[t] - 1
	}
	score(IndicatorSMACross, cross, 1, nil, nil)

	k, _ := indicators.Stochastic(a.high, a.low, a.close, 14, 3, 3)
	g = grid0to100(Thresholds{20, 80})
	score(IndicatorStoch, k, -1, k, &g)

	wr := indicators.WilliamsR(a.high, a.low, a.close, 14)
	score(IndicatorWillR, wr, -1, wr, &willRGrid)

	cci := indicators.CCI(a.high, a.low, a.close, 20)
	score(IndicatorCCI, cci, -1, cci, &cciGrid)

	score(IndicatorROC, indicators.ROC(a.close, 20), 1, nil, nil)
	return out
}

// fwdOrder is the forward returns of [sensitivity] with the days they
// are defined on sorted by return, once, so that ranking them among the
// days of each indicator is a walk rather than a sort.
type fwdOrder struct {
	fwd   []float64
	order []int // the t with fwd[t] not NaN, by fwd[t] ascending
}

func newFwdOrder(fwd []float64) fwdOrder {
	var defined []float64 // the fwd[t] not NaN, in order of t
	at := make([]int, 0, len(fwd))
	for t, v := range fwd {
		if !math.IsNaN(v) {
			defined = append(defined, v)
			at = append(at, t)
		}
	}
	order := radixOrder(make([]int, len(defined)), defined)
	for k, i := range order {
		order[k] = at[i]
	}
	return fwdOrder{fwd: fwd, order: order}
}

// rankIC returns Spearman's rho of sig[t] and fwd[t] over the t where both
// are defined, or 0 with fewer than minPairs pairs: the Pearson
// correlation of the ranks of sig (sorted here) and of fwd (from the
// order sorted once), the same ranks [spearman] gives the pairs.
func (f fwdOrder) rankIC(sig []float64) float64 {
	fwd := f.fwd
	in := func(t int) bool { return !math.IsNaN(sig[t]) && !math.IsInf(sig[t], 0) && !math.IsNaN(fwd[t]) }
	sc := rankPool.Get().(*rankScratch)
	defer rankPool.Put(sc)
	pos := growInts(&sc.pos, len(fwd)) // t's index among the pairs, plus one; 0 when t is not a pair
	clear(pos)
	x := growFloats(&sc.x, len(sig))[:0]
	for t := range sig {
		if in(t) {
			x = append(x, sig[t])
			pos[t] = len(x)
		}
	}
	n := len(x)
	if n < minPairs {
		return 0
	}
	rx, ry := growFloats(&sc.rx, n), growFloats(&sc.ry, n)
	clear(ry)
	ranks(rx, x, growFloats(&sc.sorted, n), growInts(&sc.end, n))
	// The pairs' fwd in ascending order, runs of equal values given
	// their average rank, as ranks does.
	run := make([]int, 0, 8)
	k := 0 // pairs ranked so far
	for i := 0; i < len(f.order); {
		v := fwd[f.order[i]]
		run = run[:0]
		for ; i < len(f.order) && fwd[f.order[i]] == v; i++ {
			if t := f.order[i]; pos[t] > 0 {
				run = append(run, pos[t]-1)
			}
		}
		r := float64(2*k+len(run)+1) / 2 // mean of ranks k+1..k+len(run)
		for _, p := range run {
			ry[p] = r
		}
		k += len(run)
	}
	c := stat.Correlation(rx, ry, nil)
	if math.IsNaN(c) {
		return 0
	}
	return c
}

// rankScratch holds the buffers of [fwdOrder.rankIC], reused through
// rankPool: eight rank correlations a profile over the whole history
// otherwise allocate a dozen slices of its length each.
type rankScratch struct {
	pos, end          []int
	x, rx, ry, sorted []float64
}

// rankPool keeps the buffers of [fwdOrder.rankIC] between calls.
var rankPool = sync.Pool{New: func() any { return new(rankScratch) }}

// growFloats returns (*buf)[:n], growing *buf when it holds less. The
// values are left as they were.
func growFloats(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// growInts is [growFloats] for ints.
func growInts(buf *[]int, n int) []int {
	if cap(*buf) < n {
		*buf = make([]int, n)
	}
	return (*buf)[:n]
}

// gridSums are the sums behind [bestThresholds]: for each oversold level
// i the sum and sum of squares of the next day's return over the days the
// oscillator was at or below it (ls), for each overbought level those of
// minus the return at or above it (ss), and n the days the oscillator was
// defined.
type gridSums struct {
	ls, ss []sums
	n      int
}

// sums is a sum s and a sum of squares q.
type sums struct{ s, q float64 }

func newGridSums(g grid) gridSums {
	return gridSums{ls: make([]sums, len(g.oversold)), ss: make([]sums, len(g.overbought))}
}

func (gs gridSums) clone() gridSums {
	return gridSums{ls: slices.Clone(gs.ls), ss: slices.Clone(gs.ss), n: gs.n}
}

// add counts day t: the oscillator osc[t] and the next day's return
// ret[t+1], unless osc[t] is NaN.
func (gs *gridSums) add(osc, ret []float64, g grid, t int) {
	o := osc[t]
	if math.IsNaN(o) {
		return
	}
	gs.n++
	r := ret[t+1]
	for i, lv := range g.oversold {
		if o <= lv {
			gs.ls[i].s += r
			gs.ls[i].q += r * r
		}
	}
	for i, lv := range g.overbought {
		if o >= lv {
			gs.ss[i].s -= r
			gs.ss[i].q += r * r
		}
	}
}

// best returns the pair of g with the highest Sharpe ratio by the sums, the
// conventional pair on ties and when none beats it.
func (gs gridSums) best(g grid) Thresholds {
	eval := func(i, j int) float64 {
		return sharpeFromSums(gs.ls[i].s+gs.ss[j].s, gs.ls[i].q+gs.ss[j].q, gs.n)
	}
	bi, bj := -1, -1
	for i, lv := range g.oversold {
		for j, hv := range g.overbought {
			if lv == g.conventional.Oversold && hv == g.conventional.Overbought {
				bi, bj = i, j
			}
		}
	}
	best := eval(bi, bj)
	for i := range g.oversold {
		for j := range g.overbought {
			if v := eval(i, j); v > best {
				best, bi, bj = v, i, j
			}
		}
	}
	return Thresholds{Oversold: g.oversold[bi], Overbought: g.overbought[bj]}
}

// bestThresholds returns the (oversold, overbought) pair of g that
// maximises the annualised Sharpe ratio of the daily rule "long the next
// day when osc <= oversold, short when osc >= overbought, flat otherwise",
// over every day where osc is defined (flat days count as 0). Ties, and a
// series where no pair beats it, keep the conventional pair.
//
// The rule's return splits into a long and a short part, so each level's
// sum and sum of squares are taken once ([gridSums]) and the pairs
// combined from them.
func bestThresholds(a *asset, osc []float64, g grid) Thresholds {
	gs := newGridSums(g)
	for t := 0; t < a.n-1; t++ {
		gs.add(osc, a.ret, g, t)
	}
	return gs.best(g)
}
