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
	r := make([]float64, 0, a.n-1-start)
	for t := start; t < a.n-1; t++ {
		r = append(r, float64(pos[t])*a.ret[t+1])
	}
	return annualSharpe(r)
}

// momentumSharpe: pos[t] = sign(ln C[t-21] - ln C[t-252]).
func momentumSharpe(a *asset) float64 {
	pos := make([]int8, a.n)
	for t := momLookback; t < a.n; t++ {
		pos[t] = sign(a.logc[t-momSkip] - a.logc[t-momLookback])
	}
	return backtest(a, pos, momLookback)
}

// meanReversionSharpe: z = (C - SMA20) / sd20 (population sd, Bollinger);
// long at z <= -1 until z >= 0, short at z >= +1 until z <= 0.
func meanReversionSharpe(a *asset) float64 {
	upper, mid, _ := indicators.BollingerBands(a.close, revPeriod, 1)
	pos := make([]int8, a.n)
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
	return backtest(a, pos, revPeriod-1)
}

// breakoutSharpe: long when the close exceeds the highest high of the 20
// previous days, short when it falls below their lowest low, otherwise the
// position is held (stop and reverse).
func breakoutSharpe(a *asset) float64 {
	hh := indicators.Highest(a.high, breakoutDays)
	ll := indicators.Lowest(a.low, breakoutDays)
	pos := make([]int8, a.n)
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
	return backtest(a, pos, breakoutDays)
}

// trendFollowingSharpe: long while SMA50 > SMA200, short while below.
func trendFollowingSharpe(a *asset) float64 {
	fast := indicators.SMA(a.close, trendFast)
	slow := indicators.SMA(a.close, trendSlow)
	pos := make([]int8, a.n)
	for t := trendSlow - 1; t < a.n; t++ {
		pos[t] = sign(fast[t] - slow[t])
	}
	return backtest(a, pos, trendSlow-1)
}

// affinity maps the four strategies' Sharpe ratios to 0–1 scores.
func affinity(a *asset) Affinity {
	return Affinity{
		Momentum:       logistic(momentumSharpe(a)),
		MeanReversion:  logistic(meanReversionSharpe(a)),
		Breakout:       logistic(breakoutSharpe(a)),
		TrendFollowing: logistic(trendFollowingSharpe(a)),
	}
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
