package backtest_test

import (
	"context"
	"testing"

	"github.com/tradekit/tradekit/backtest"
)

// BenchmarkRun is docs/performance.md's figure: one strategy (a 50/200-day moving
// average crossover, 20 positions, stops and costs) over 500 assets × 10
// years of daily bars (2,520 each), formulas evaluated on all cores.
//
//	go test ./backtest -run '^$' -bench Run -benchtime 5x
func BenchmarkRun(b *testing.B) {
	u := universe(500, 2520)
	s, err := backtest.Strategy{
		Entry: "crossover(sma(close, 50), sma(close, 200))", Exit: "crossunder(sma(close, 50), sma(close, 200))",
		MaxPositions: 20, StopLossPct: 10, TakeProfitPct: 30, CommissionBps: 5, SlippageBps: 5,
	}.Compile()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var trades int
	for b.Loop() {
		res, err := backtest.Run(context.Background(), s, u, backtest.Config{})
		if err != nil {
			b.Fatal(err)
		}
		trades = len(res.Trades)
	}
	b.ReportMetric(float64(trades), "trades")
}
