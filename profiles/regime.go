package profiles

import (
	"math"

	"gonum.org/v1/gonum/stat"
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
	sw := math.Sqrt(float64(w))
	for t := range out {
		if t < w {
			out[t] = math.NaN()
			continue
		}
		drift := a.logc[t] - a.logc[t-w]
		s := stat.StdDev(a.ret[t-w+1:t+1], nil)
		switch {
		case s > 1e-12:
			out[t] = drift / (s * sw)
		case drift > 0:
			out[t] = math.Inf(1)
		case drift < 0:
			out[t] = math.Inf(-1)
		default:
			out[t] = 0
		}
	}
	return out
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
			switch m := med.median(); {
			case m > 0:
				ratio = vol[t] / m
			case vol[t] > 0:
				ratio = math.Inf(1)
			}
		}
		T := tstat[t]
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
		r := run{labels[i], i, j - 1}
		switch {
		case len(out) == 0:
			out = append(out, r)
		case j-i < minRun || out[len(out)-1].regime == r.regime:
			out[len(out)-1].to = r.to
		default:
			out = append(out, r)
		}
		i = j
	}
	return out
}

// regimes classifies the asset's days (see the package documentation).
func regimes(a *asset, vol []float64, cfg Config) Regimes {
	labels, start := rawRegimes(a, vol, cfg)
	runs := mergeShortRuns(labels, start, cfg.MinRun)
	h := make([]RegimeRun, len(runs))
	for i, r := range runs {
		h[i] = RegimeRun{Regime: r.regime, From: a.dates[r.from]}
		if i < len(runs)-1 {
			to := a.dates[r.to]
			h[i].To = &to
		}
	}
	return Regimes{Current: runs[len(runs)-1].regime, History: h}
}
