package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestBacktest(t *testing.T) {
	open := []float64{10, 10, 11, 12, 12, 10}
	close := []float64{10, 11, 12, 12, 10, 10}
	enter := []float64{1, 0, 0, 0, 0, 0} // buy at open[1] = 10
	leave := []float64{0, 0, 1, 0, 0, 0} // sell at open[3] = 12
	r := Backtest(open, close, enter, leave, 0)
	// Bought at 10, sold at 12: +20%; flat afterwards.
	if math.Abs(r.TotalReturn-0.2) > 1e-12 || r.Trades != 2 {
		t.Errorf("Backtest = %+v, want +20%% in 2 trades", r)
	}
	// In the market on bars 1, 2 and 3 (sold at its open) of 5.
	if math.Abs(r.Exposure-3.0/5) > 1e-12 || r.MaxDrawdown != 0 {
		t.Errorf("exposure %v, drawdown %v", r.Exposure, r.MaxDrawdown)
	}
	// A 1% cost per trade: 0.99 * 1.2 * 0.99.
	if r := Backtest(open, close, enter, leave, 0.01); math.Abs(r.TotalReturn-(0.99*1.2*0.99-1)) > 1e-12 {
		t.Errorf("with costs: %v", r.TotalReturn)
	}
	// Holding from bar 1 through the fall from 12 to 10: drawdown -1/6.
	hold := Backtest(open, close, enter, make([]float64, 6), 0)
	if math.Abs(hold.MaxDrawdown+1.0/6) > 1e-12 {
		t.Errorf("hold drawdown %v, want -1/6", hold.MaxDrawdown)
	}
}

func TestRunOnDemoData(t *testing.T) {
	var out bytes.Buffer
	if err := run(nil, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SYNTHETIC", "buy & hold", "Sharpe", "trades"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run([]string{"-entry", "sma(close)"}, &out); err == nil || !strings.Contains(err.Error(), "1:1: sma expects 2 arguments") {
		t.Errorf("bad formula: %v", err)
	}
}
