package backtest

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// TradingDaysPerYear annualises daily figures.
const TradingDaysPerYear = 252

// Stats is a tearsheet: the figures analysts judge a backtest by. Every
// return and rate is a fraction (0.12 is 12 %). A figure whose formula
// divides by zero is NaN, or ±Inf when its numerator is not zero (the
// profit factor of a run without a losing trade is +Inf).
type Stats struct {
	Start, End  string  // the first and last day
	Years       float64 // (End − Start) in calendar days / 365.25
	FinalEquity float64
	TotalReturn float64 // FinalEquity / cash − 1
	CAGR        float64 // (1 + TotalReturn)^(1/Years) − 1
	Volatility  float64 // sd(r) × √252, r the daily returns of the equity curve (sample sd)
	Sharpe      float64 // mean(r) / sd(r) × √252, no risk-free rate
	Sortino     float64 // mean(r) / √(mean(min(r, 0)²)) × √252
	MaxDrawdown float64 // min over days of equity / the highest equity before − 1; ≤ 0
	// MaxDrawdownDays is the longest time below a previous high: the
	// most consecutive trading days that ended below it.
	MaxDrawdownDays int
	Calmar          float64 // CAGR / |MaxDrawdown|
	Trades          int
	WinRate         float64 // trades with PnL > 0 / Trades
	ProfitFactor    float64 // the winners' PnL / |the losers' PnL|
	Expectancy      float64 // mean PnL of a trade, in money
	AvgTradeReturn  float64 // mean Return of a trade
	Exposure        float64 // the share of days that ended with a position
	Turnover        float64 // (Traded / 2) / mean equity / Years: the portfolio's yearly turnover
}

// computeStats computes the tearsheet of a finished run.
func computeStats(res *Result, cash float64) Stats {
	eq := res.Equity
	n := len(eq)
	s := Stats{Start: res.Dates[0].String(), End: res.Dates[n-1].String(), FinalEquity: eq[n-1]}
	s.Years = float64(res.Dates[n-1].Sub(res.Dates[0])) / 365.25
	s.TotalReturn = eq[n-1]/cash - 1
	s.CAGR = math.Pow(1+s.TotalReturn, 1/s.Years) - 1

	r := make([]float64, 0, n)
	prev := cash
	for _, e := range eq {
		r = append(r, e/prev-1)
		prev = e
	}
	mean, sd := stat.MeanStdDev(r, nil)
	ann := math.Sqrt(TradingDaysPerYear)
	s.Volatility = sd * ann
	s.Sharpe = mean / sd * ann
	down := 0.0
	for _, x := range r {
		if x < 0 {
			down += x * x
		}
	}
	s.Sortino = mean / math.Sqrt(down/float64(len(r))) * ann

	s.MaxDrawdown, s.MaxDrawdownDays = drawdown(eq, cash)
	s.Calmar = s.CAGR / math.Abs(s.MaxDrawdown)

	s.Trades = len(res.Trades)
	var wins, grossWin, grossLoss, pnl, ret float64
	for _, t := range res.Trades {
		pnl += t.PnL
		ret += t.Return
		if t.PnL > 0 {
			wins++
			grossWin += t.PnL
		} else {
			grossLoss -= t.PnL
		}
	}
	trades := float64(s.Trades)
	s.WinRate, s.Expectancy, s.AvgTradeReturn = wins/trades, pnl/trades, ret/trades
	s.ProfitFactor = grossWin / grossLoss

	held := 0
	for _, x := range res.Exposure {
		if x > 0 {
			held++
		}
	}
	s.Exposure = float64(held) / float64(n)
	s.Turnover = res.Traded / 2 / stat.Mean(eq, nil) / s.Years
	return s
}

// drawdown returns the deepest fall of the equity curve from a previous
// high (cash being the first high) and the longest time below a high, in
// days.
func drawdown(eq []float64, cash float64) (depth float64, days int) {
	peak, since := cash, -1 // since: the index of the peak's day; -1 for the start
	for i, e := range eq {
		if e >= peak {
			peak, since = e, i
			continue
		}
		depth = min(depth, e/peak-1)
		days = max(days, i-since)
	}
	return depth, days
}
