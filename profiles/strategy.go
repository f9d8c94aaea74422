package profiles

import "github.com/tradekit/tradekit/indicators"

// Strategy parameters (see the package documentation).
const (
	momLookback  = 252 // 12 months
	momSkip      = 21  // skip the last month
	revPeriod    = 20  // z-score window of the mean-reversion rule
	revEntry     = 1.0 // |z| at which the mean-reversion rule enters
	breakoutDays = 20  // Donchian channel length
	trendFast    = 50  // fast SMA of the trend-following rule
	trendSlow    = 200 // slow SMA of the trend-following rule
	noPosition   = 0
	long, short  = 1, -1
)

// backtest returns the annualised Sharpe ratio of holding pos[t] from the
// close of day t to the close of day t+1, for t from start (the first day
// the rule can decide) to n-2: strategy return pos[t] * ret[t+1], flat days
// counting as 0.
func backtest(a *asset, pos []int8, start int) float64 {
	if start >= a.n-1 {
		return 0
	}
	r := a.sc.floats(a.n - 1 - start)[:0]
	for t := start; t < a.n-1; t++ {
		r = append(r, float64(pos[t])*a.ret[t+1])
	}
	return annualSharpe(r)
}

// A rule returns the position held from the close of each day (decided
// from data up to that day) and the first day it is defined.
type rule func(a *asset) (pos []int8, start int)

// momentumPos: pos[t] = sign(ln C[t-21] - ln C[t-252]).
func momentumPos(a *asset) ([]int8, int) {
	pos := a.sc.int8s(a.n)
	for t := momLookback; t < a.n; t++ {
		pos[t] = sign(a.logc[t-momSkip] - a.logc[t-momLookback])
	}
	return pos, momLookback
}

// meanReversionPos: z = (C - SMA20) / sd20 (population sd, Bollinger);
// long at z <= -1 until z >= 0, short at z >= +1 until z <= 0.
func meanReversionPos(a *asset) ([]int8, int) {
	upper, mid := a.sc.floats(a.n), a.sc.floats(a.n)
	indicators.BollingerBandsInto(upper, mid, a.sc.floats(a.n), a.close, revPeriod, 1)
	pos := a.sc.int8s(a.n)
	var p int8
	for t := revPeriod - 1; t < a.n; t++ {
		z := 0.0
		if sd := upper[t] - mid[t]; sd > 0 {
			z = (a.close[t] - mid[t]) / sd
		}
		switch {
		case p == long && z >= 0, p == short && z <= 0:
			p = noPosition
		}
		switch {
		case z <= -revEntry:
			p = long
		case z >= revEntry:
			p = short
		}
		pos[t] = p
	}
	return pos, revPeriod - 1
}

// breakoutPos: long when the close exceeds the highest high of the 20
// previous days, short when it falls below their lowest low, otherwise the
// position is held (stop and reverse).
func breakoutPos(a *asset) ([]int8, int) {
	hh, ll := a.sc.floats(a.n), a.sc.floats(a.n)
	indicators.HighestInto(hh, a.high, breakoutDays)
	indicators.LowestInto(ll, a.low, breakoutDays)
	pos := a.sc.int8s(a.n)
	var p int8
	for t := breakoutDays; t < a.n; t++ {
		switch c := a.close[t]; {
		case c > hh[t-1]:
			p = long
		case c < ll[t-1]:
			p = short
		}
		pos[t] = p
	}
	return pos, breakoutDays
}

// trendFollowingPos: long while SMA50 > SMA200, short while below.
func trendFollowingPos(a *asset) ([]int8, int) {
	fast, slow := a.sma(trendFast), a.sma(trendSlow)
	pos := a.sc.int8s(a.n)
	for t := trendSlow - 1; t < a.n; t++ {
		pos[t] = sign(fast[t] - slow[t])
	}
	return pos, trendSlow - 1
}

// affinity maps the four strategies' Sharpe ratios to 0–1 scores.
func affinity(a *asset) Affinity {
	score := func(r rule) float64 {
		pos, start := r(a)
		return logistic(backtest(a, pos, start))
	}
	return Affinity{
		Momentum:       score(momentumPos),
		MeanReversion:  score(meanReversionPos),
		Breakout:       score(breakoutPos),
		TrendFollowing: score(trendFollowingPos),
	}
}

// rules are the four strategies, in the order of a [State]'s sums.
var rules = [4]rule{momentumPos, meanReversionPos, breakoutPos, trendFollowingPos}

// strategySums is a strategy's running sums: the sum s and sum of squares
// q of its daily returns pos[t]*ret[t+1], and their number k.
type strategySums struct {
	s, q float64
	k    int
}

// affinityFrom is [affinity] from running sums: the sums of every rule's
// returns up to the day before a's last, taken from prev (adding the
// return of the position held over the last day) or summed over the whole
// series when prev is nil, and left in next. The Sharpe ratio from sums
// equals the two-pass one of [affinity] within rounding.
func affinityFrom(a *asset, prev *[4]strategySums, next *[4]strategySums) Affinity {
	var sc [4]float64
	for i, r := range rules {
		pos, start := r(a)
		var ss strategySums
		add := func(t int) {
			v := float64(pos[t]) * a.ret[t+1]
			ss.s += v
			ss.q += v * v
			ss.k++
		}
		if prev != nil {
			ss = prev[i]
			if t := a.n - 2; t >= start {
				add(t)
			}
		} else {
			for t := start; t < a.n-1; t++ {
				add(t)
			}
		}
		next[i] = ss
		sc[i] = logistic(sharpeFromSums(ss.s, ss.q, ss.k))
	}
	return Affinity{Momentum: sc[0], MeanReversion: sc[1], Breakout: sc[2], TrendFollowing: sc[3]}
}

func sign(x float64) int8 {
	switch {
	case x > 0:
		return long
	case x < 0:
		return short
	}
	return noPosition
}
