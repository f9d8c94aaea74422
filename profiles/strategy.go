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

// A lastRule returns a rule's position at day t alone, equal to pos[t] of
// the rule, and whether t is at or after the rule's first day (start).
type lastRule func(a *asset, t int) (p int8, ok bool)

// lastRules are the rules whose position at one day is found without
// the series of positions, by index in rules; nil for the others, whose
// indicators are running sums from the first bar (Bollinger, the SMAs):
// only the whole series gives their bits.
var lastRules = [4]lastRule{momentumAt, nil, breakoutAt, nil}

// momentumAt is [momentumPos] at day t.
func momentumAt(a *asset, t int) (int8, bool) {
	if t < momLookback {
		return noPosition, false
	}
	return sign(a.logc[t-momSkip] - a.logc[t-momLookback]), true
}

// breakoutAt is [breakoutPos] at day t: the position taken by the last
// breakout up to t, found walking back from t (no position if none). The
// highest high and lowest low of the 20 days before each day are maxima
// and minima, so taken afresh they are the bits of the running ones.
func breakoutAt(a *asset, t int) (int8, bool) {
	if t < breakoutDays {
		return noPosition, false
	}
	for s := t; s >= breakoutDays; s-- {
		hh, ll := a.high[s-1], a.low[s-1]
		for j := s - breakoutDays; j < s-1; j++ {
			hh, ll = max(hh, a.high[j]), min(ll, a.low[j])
		}
		switch c := a.close[s]; {
		case c > hh:
			return long, true
		case c < ll:
			return short, true
		}
	}
	return noPosition, true
}

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
		var ss strategySums
		add := func(p int8, t int) {
			v := float64(p) * a.ret[t+1]
			ss.s += v
			ss.q += v * v
			ss.k++
		}
		switch t := a.n - 2; {
		case prev != nil && lastRules[i] != nil:
			ss = prev[i]
			if p, ok := lastRules[i](a, t); ok {
				add(p, t)
			}
		case prev != nil:
			ss = prev[i]
			if pos, start := r(a); t >= start {
				add(pos[t], t)
			}
		default:
			pos, start := r(a)
			for t := start; t < a.n-1; t++ {
				add(pos[t], t)
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
