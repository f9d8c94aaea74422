package main

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// Result summarises a backtest.
type Result struct {
	TotalReturn float64 // final equity / initial - 1
	CAGR        float64 // (1 + TotalReturn)^(252/bars) - 1
	Volatility  float64 // sample stddev of daily returns * sqrt(252)
	Sharpe      float64 // mean / stddev of daily returns * sqrt(252), risk-free rate 0
	MaxDrawdown float64 // the deepest fall of equity from a peak, as a negative fraction
	Exposure    float64 // the fraction of bars spent in the market
	Trades      int     // entries and exits
}

// Backtest runs a long-only strategy: a non-zero enter[t] (when flat) or
// leave[t] (when long) at bar t's close trades at open[t+1]. NaN signals
// count as zero. Each trade pays cost, a fraction of its value. Daily
// returns are marked to close; the position is held through the last bar.
func Backtest(open, close, enter, leave []float64, cost float64) Result {
	n := len(close)
	long := false
	equity, peak := 1.0, 1.0
	var r Result
	rets := make([]float64, 0, n)
	inMarket := 0
	for t := 1; t < n; t++ {
		prev := equity
		wasLong := long
		switch {
		case !long && enter[t-1] != 0 && !math.IsNaN(enter[t-1]):
			// Buy at today's open: the return is open→close, less costs.
			equity *= (1 - cost) * close[t] / open[t]
			long = true
			r.Trades++
		case long && leave[t-1] != 0 && !math.IsNaN(leave[t-1]):
			// Sell at today's open: yesterday's close→open, less costs.
			equity *= open[t] / close[t-1] * (1 - cost)
			long = false
			r.Trades++
		case long:
			equity *= close[t] / close[t-1]
		}
		if long || wasLong {
			inMarket++
		}
		rets = append(rets, equity/prev-1)
		peak = math.Max(peak, equity)
		r.MaxDrawdown = math.Min(r.MaxDrawdown, equity/peak-1)
	}
	r.TotalReturn = equity - 1
	if len(rets) > 0 {
		r.CAGR = math.Pow(equity, 252/float64(len(rets))) - 1
		r.Exposure = float64(inMarket) / float64(len(rets))
	}
	if len(rets) > 1 {
		mean, sd := stat.MeanStdDev(rets, nil)
		r.Volatility = sd * math.Sqrt(252)
		if sd > 0 {
			r.Sharpe = mean / sd * math.Sqrt(252)
		}
	}
	return r
}
