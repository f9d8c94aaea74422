package formula

import (
	"math"
	"testing"

	"github.com/tradekit/tradekit/ohlcv"
)

// tail returns the last n bars of s.
func tail(s ohlcv.Series, n int) ohlcv.Series {
	from := len(s.Close) - n
	return ohlcv.Series{Open: s.Open[from:], High: s.High[from:], Low: s.Low[from:], Close: s.Close[from:], Volume: s.Volume[from:]}
}

// TestLookback checks each formula's lookback and that evaluating it on
// the last lookback+k bars gives its values at the last k bars, as the
// whole series does (within the rounding of running sums), while one bar
// fewer does not: the lookback is what the formula needs, no less.
func TestLookback(t *testing.T) {
	bars := randomBars(600, 11)
	const k = 5
	for _, tt := range []struct {
		src  string
		want int
	}{
		{"close > 100", 0},
		{"sma(close, 20)", 19},
		{"crossover(sma(close, 20), sma(close, 50))", 50},
		{"close > highest(high, 20)[1]", 20},
		{"change(sma(close, 10), 3)", 12},
		{"change(close)", 1},
		{"roc(close, 10) > 2 and volume > sma(volume, 30)", 29},
		{"stoch_k() < 20", 17},
		{"stoch_d(5, 3, 2) > 80", 7},
		{"cci(20) > 100 or willr(14) < -80", 19},
		{"bb_lower(close, 20, 2.5) > low", 19},
		{"mfi(14) > 80", 14},
		{"lag(wma(close, 9), 4) - mom(close, 5)", 12},
		{"abs(sma(stddev(close, 10), 5) - 1)", 13},
		{"max(highest(high, 5), lowest(low, 8)[2], 3)", 9},
	} {
		e := mustParse(t, tt.src)
		got, ok := e.Lookback()
		if !ok || got != tt.want {
			t.Errorf("%s: Lookback() = %d, %v, want %d, true", tt.src, got, ok, tt.want)
			continue
		}
		whole := mustEval(t, tt.src, bars)
		part := mustEval(t, tt.src, tail(bars, got+k))
		for i := range k {
			w, p := whole[len(whole)-k+i], part[len(part)-k+i]
			if !(math.IsNaN(w) && math.IsNaN(p)) && math.Abs(w-p) > 1e-9*max(1, math.Abs(w)) {
				t.Errorf("%s: bar %d of the last %d: %v over the whole series, %v over the last %d bars", tt.src, i, k, w, p, got+k)
			}
		}
		if got > 0 {
			short := mustEval(t, tt.src, tail(bars, got+k-1))
			if v := short[len(short)-k]; !math.IsNaN(v) && !math.IsNaN(whole[len(whole)-k]) && v == whole[len(whole)-k] {
				t.Errorf("%s: one bar fewer than the lookback still gave %v at the first of the last %d bars", tt.src, v, k)
			}
		}
	}
	for _, src := range []string{"ema(close, 10) > close", "rsi(close, 14) < 30", "macd_hist(close) > 0", "atr(14) > 2",
		"adx(14) > 25", "obv() > 0", "barssince(close > open) > 3", "sma(ema(close, 5), 3)", "tema(close, 5)[2]"} {
		if n, ok := mustParse(t, src).Lookback(); ok {
			t.Errorf("%s: Lookback() = %d, true; want it unbounded", src, n)
		}
	}
}
