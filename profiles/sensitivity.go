package profiles

import (
	"math"
	"slices"

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
	rsiGrid   = grid0to100(Thresholds{30, 70})
	stochGrid = grid0to100(Thresholds{20, 80})
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
	sc := a.sc
	fwd := sc.floats(a.n)
	for t := range fwd {
		if t+cfg.Horizon < a.n {
			fwd[t] = a.logc[t+cfg.Horizon] - a.logc[t]
		} else {
			fwd[t] = math.NaN()
		}
	}
	out := make(map[string]Sensitivity, 8)
	fo := newFwdOrderIn(fwd, sc)
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

	rsi := sc.floats(a.n)
	indicators.RSIInto(rsi, a.close, 14)
	score(IndicatorRSI, rsi, -1, rsi, &rsiGrid)

	macd, sig, hist := sc.floats(a.n), sc.floats(a.n), sc.floats(a.n)
	indicators.MACDInto(macd, sig, hist, a.close, 12, 26, 9)
	for t := range hist {
		hist[t] /= a.close[t]
	}
	score(IndicatorMACD, hist, 1, nil, nil)

	up, mid, lo := sc.floats(a.n), sc.floats(a.n), sc.floats(a.n)
	indicators.BollingerBandsInto(up, mid, lo, a.close, 20, 2)
	pb := mid // the middle band is not read: %b takes its place
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

	fast, slow := a.sma(trendFast), a.sma(trendSlow)
	cross := sc.floats(a.n)
	for t := range cross {
		cross[t] = fast[t]/slow[t] - 1
	}
	score(IndicatorSMACross, cross, 1, nil, nil)

	hh, ll := sc.floats(a.n), sc.floats(a.n)
	indicators.HighestInto(hh, a.high, 14)
	indicators.LowestInto(ll, a.low, 14)
	k := stochasticK(sc.floats(a.n), hh, ll, a.close, 3, 3)
	score(IndicatorStoch, k, -1, k, &stochGrid)

	wr := williamsR(sc.floats(a.n), hh, ll, a.close)
	score(IndicatorWillR, wr, -1, wr, &willRGrid)

	cci := cciInto(sc.floats(a.n), sc.floats(a.n), a.high, a.low, a.close, 20)
	score(IndicatorCCI, cci, -1, cci, &cciGrid)

	roc := sc.floats(a.n)
	indicators.ROCInto(roc, a.close, 20)
	score(IndicatorROC, roc, 1, nil, nil)
	return out
}

// stochasticK writes into dst, and returns, the slow %K of
// [indicators.Stochastic] with smoothings slowK and slowD, from the
// highest highs hh and lowest lows ll of its fastK bars
// ([indicators.HighestInto], [indicators.LowestInto]; NaN before the
// window is full): the very arithmetic of [indicators.StochasticStream],
// bar for bar, so the same bits, but with the window's extremes found in
// O(1) amortised rather than by a scan of its fastK bars at each bar, and
// shared with [williamsR].
func stochasticK(dst, hh, ll, close []float64, slowK, slowD int) []float64 {
	sk, sd := indicators.NewSMAStream(slowK), indicators.NewSMAStream(slowD)
	nan := math.NaN()
	for t := range dst {
		if math.IsNaN(hh[t]) {
			dst[t] = nan
			continue
		}
		fk := 0.0
		if diff := (hh[t] - ll[t]) / 100.0; diff != 0 {
			fk = (close[t] - ll[t]) / diff
		}
		k, d := sk.Next(fk), 0.0
		if !math.IsNaN(k) {
			d = sd.Next(k)
		}
		if math.IsNaN(k) || math.IsNaN(d) {
			k = nan
		}
		dst[t] = k
	}
	return dst
}

// williamsR writes into dst, and returns, [indicators.WilliamsR] from the
// highest highs hh and lowest lows ll of its period (as for
// [stochasticK]), by the arithmetic of [indicators.WilliamsRStream].
func williamsR(dst, hh, ll, close []float64) []float64 {
	for t := range dst {
		switch diff := (hh[t] - ll[t]) / (-100.0); {
		case math.IsNaN(hh[t]):
			dst[t] = math.NaN()
		case diff != 0:
			dst[t] = (hh[t] - close[t]) / diff
		default:
			dst[t] = 0
		}
	}
	return dst
}

// cciInto writes into dst, and returns, [indicators.CCI] of the bars
// over period bars, with tp scratch of their length for the typical
// prices: the arithmetic of [indicators.CCIStream] bar for bar, whose
// ring holds bar j in slot j%period and sums the window in slot order,
// so the same bits, without the stream's allocations.
func cciInto(dst, tp, high, low, close []float64, period int) []float64 {
	for t := range tp {
		tp[t] = (high[t] + low[t] + close[t]) / 3
	}
	p := float64(period)
	for t := range dst {
		if t < period-1 {
			dst[t] = math.NaN()
			continue
		}
		// The window t-period+1 … t in slot order: from the bar in slot
		// 0 to t, then the bars before it.
		from := t - period + 1
		w0 := from + (period-from%period)%period
		avg := 0.0
		for _, x := range tp[w0 : t+1] {
			avg += x
		}
		for _, x := range tp[from:w0] {
			avg += x
		}
		avg /= p
		dev := 0.0
		for _, x := range tp[w0 : t+1] {
			dev += math.Abs(x - avg)
		}
		for _, x := range tp[from:w0] {
			dev += math.Abs(x - avg)
		}
		v := 0.0
		if d := tp[t] - avg; d != 0 && dev != 0 {
			v = d / (0.015 * (dev / p))
		}
		dst[t] = v
	}
	return dst
}

// fwdOrder is the forward returns of [sensitivity] with the days they
// are defined on sorted by return, once, so that ranking them among the
// days of each indicator is a walk rather than a sort.
type fwdOrder struct {
	fwd    []float64
	order  []int    // the t with fwd[t] not NaN, by fwd[t] ascending
	runEnd []int    // at the start i of each run of equal fwd in order, the run's end
	sc     *scratch // the buffers of rankIC
}

// newFwdOrder returns the order of fwd, on the heap.
func newFwdOrder(fwd []float64) fwdOrder { return newFwdOrderIn(fwd, nil) }

// newFwdOrderIn returns the order of fwd, taking its buffers and those of
// every rankIC from sc.
func newFwdOrderIn(fwd []float64, sc *scratch) fwdOrder {
	defined := sc.floats(len(fwd))[:0] // the fwd[t] not NaN, in order of t
	at := sc.ints(len(fwd))[:0]
	for t, v := range fwd {
		if !math.IsNaN(v) {
			defined = append(defined, v)
			at = append(at, t)
		}
	}
	n := len(defined)
	order, sorted := sc.ints(n), sc.floats(n)
	orderInto(sorted, order, defined, sc.floats(n), sc.ints(n))
	for k, i := range order {
		order[k] = at[i]
	}
	runEnd := sc.ints(n)
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && sorted[hi] == sorted[lo] {
			hi++
		}
		runEnd[lo] = hi
		lo = hi
	}
	return fwdOrder{fwd: fwd, order: order, runEnd: runEnd, sc: sc}
}

// rankIC returns Spearman's rho of sig[t] and fwd[t] over the t where both
// are defined, or 0 with fewer than minPairs pairs: the Pearson
// correlation of the ranks of sig (sorted here) and of fwd (from the
// order sorted once), the same ranks [spearman] gives the pairs.
func (f fwdOrder) rankIC(sig []float64) float64 {
	fwd := f.fwd
	pos := f.sc.ints(len(fwd)) // t's index among the pairs, plus one; 0 when t is not a pair
	x := f.sc.floats(len(sig))[:0]
	for t, v := range sig {
		pos[t] = 0
		if !math.IsNaN(v) && !math.IsInf(v, 0) && !math.IsNaN(fwd[t]) {
			x = append(x, v)
			pos[t] = len(x)
		}
	}
	n := len(x)
	if n < minPairs {
		return 0
	}
	rx, ry := f.sc.floats(n), f.sc.floats(n)
	ranksInto(rx, x, f.sc.floats(n), f.sc.ints(n), f.sc.ints(n))
	// The pairs' fwd in ascending order, runs of equal values given
	// their average rank, as ranks does.
	order := f.order
	k := 0 // pairs ranked so far
	for i := 0; i < len(order); {
		j := f.runEnd[i]
		if j == i+1 {
			// A value of its own: rank k+1, which is (2k+1+1)/2 bit for bit.
			if p := pos[order[i]]; p > 0 {
				k++
				ry[p-1] = float64(k)
			}
			i = j
			continue
		}
		c := 0 // the pairs among the run
		for _, t := range order[i:j] {
			if pos[t] > 0 {
				c++
			}
		}
		r := float64(2*k+c+1) / 2 // mean of ranks k+1..k+c
		for _, t := range order[i:j] {
			if p := pos[t]; p > 0 {
				ry[p-1] = r
			}
		}
		k += c
		i = j
	}
	c := stat.Correlation(rx, ry, nil)
	if math.IsNaN(c) {
		return 0
	}
	return c
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
