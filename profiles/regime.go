package profiles

import (
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/tradekit/tradekit/calendar"
)

// trendStat returns the trend statistic at every index,
//
//	T[t] = (ln C[t] - ln C[t-W]) / (s_W * sqrt(W)) = mean(r) / (s_W / sqrt(W))
//
// the t-statistic of the mean of the last W daily log returns, s_W their
// sample standard deviation; NaN before index W. A window with no
// dispersion gives ±Inf by the sign of the drift, or 0 without drift.
func trendStat(a *asset, w int) []float64 {
	out := make([]float64, a.n)
	for t := range out {
		if t < w {
			out[t] = math.NaN()
			continue
		}
		out[t] = trendAt(a, w, t)
	}
	return out
}

// trendAt returns the trend statistic T[t] of [trendStat], for t >= w.
func trendAt(a *asset, w, t int) float64 {
	drift := a.logc[t] - a.logc[t-w]
	s := stat.StdDev(a.ret[t-w+1:t+1], nil)
	switch {
	case s > 1e-12:
		return drift / (s * math.Sqrt(float64(w)))
	case drift > 0:
		return math.Inf(1)
	case drift < 0:
		return math.Inf(-1)
	}
	return 0
}

// volRatio returns the ratio of today's volatility v to the median med of
// the n readings so far, 0 while n < cfg.VolMinHistory.
func volRatio(v, med float64, n int, cfg Config) float64 {
	if n < cfg.VolMinHistory {
		return 0
	}
	switch {
	case med > 0:
		return v / med
	case v > 0:
		return math.Inf(1)
	}
	return 0
}

// nextRegime applies the hysteresis rules of the package documentation to
// the day's volatility ratio and trend statistic T, from the day before's
// regime state.
func nextRegime(state Regime, ratio, T float64, cfg Config) Regime {
	switch {
	case state == Volatile && ratio >= cfg.VolExit:
		// stays volatile
	case ratio >= cfg.VolEnter:
		state = Volatile
	case state == TrendingUp && T >= cfg.TrendExit:
	case state == TrendingDown && T <= -cfg.TrendExit:
	case T >= cfg.TrendEnter:
		state = TrendingUp
	case T <= -cfg.TrendEnter:
		state = TrendingDown
	default:
		state = Ranging
	}
	return state
}

// rawRegimes labels each day from index start on with the hysteresis rules
// of the package documentation, before the minimum-run filter.
func rawRegimes(a *asset, vol []float64, cfg Config) (labels []Regime, start int) {
	tstat := trendStat(a, cfg.TrendWindow)
	start = max(cfg.TrendWindow, cfg.VolWindow)
	var finite []float64
	for _, v := range vol {
		if !math.IsNaN(v) {
			finite = append(finite, v)
		}
	}
	med := newMedianTracker(finite)
	labels = make([]Regime, a.n)
	state := Ranging
	for t := cfg.VolWindow; t < a.n; t++ {
		med.add(vol[t])
		if t < start {
			continue
		}
		ratio := 0.0
		if med.n >= cfg.VolMinHistory {
			ratio = volRatio(vol[t], med.median(), med.n, cfg)
		}
		state = nextRegime(state, ratio, tstat[t], cfg)
		labels[t] = state
	}
	return labels, start
}

type run struct {
	regime Regime
	from   int // first index
	to     int // last index, inclusive
}

// mergeShortRuns returns the runs of labels[start:], where a run shorter
// than minRun is absorbed by the run before it (the first run is kept
// whatever its length), and neighbouring runs of one regime are joined.
func mergeShortRuns(labels []Regime, start, minRun int) []run {
	var out []run
	for i := start; i < len(labels); {
		j := i + 1
		for j < len(labels) && labels[j] == labels[i] {
			j++
		}
		out = appendRun(out, run{labels[i], i, j - 1}, minRun)
		i = j
	}
	return out
}

// appendRun adds the raw run r, which follows the runs of out, to out by
// the rule of [mergeShortRuns].
func appendRun(out []run, r run, minRun int) []run {
	switch {
	case len(out) == 0:
		out = append(out, r)
	case r.to-r.from+1 < minRun || out[len(out)-1].regime == r.regime:
		out[len(out)-1].to = r.to
	default:
		out = append(out, r)
	}
	return out
}

// regimes classifies the asset's days (see the package documentation).
func regimes(a *asset, vol []float64, cfg Config) Regimes {
	labels, start := rawRegimes(a, vol, cfg)
	runs := mergeShortRuns(labels, start, cfg.MinRun)
	return regimesOf(a, runs)
}

// regimesOf returns the regimes of the merged runs of a's days.
func regimesOf(a *asset, runs []run) Regimes {
	h := make([]RegimeRun, len(runs))
	to := make([]calendar.Date, len(runs)-1) // the runs' last days, one allocation for all
	for i, r := range runs {
		h[i] = RegimeRun{Regime: r.regime, From: a.dates[r.from]}
		if i < len(runs)-1 {
			to[i] = a.dates[r.to]
			h[i].To = &to[i]
		}
	}
	return Regimes{Current: runs[len(runs)-1].regime, History: h}
}
