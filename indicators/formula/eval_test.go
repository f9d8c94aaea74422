package formula

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/ohlcv"
)

var nan = math.NaN()

// closes is the series every hand-computed case below uses.
var closes = []float64{1, 2, 3, 4, 5, 4, 3, 2, 3, 4}

// mustParse parses src or stops the test.
func mustParse(tb testing.TB, src string) *Expr {
	tb.Helper()
	e, err := Parse(src)
	if err != nil {
		tb.Fatalf("Parse(%q): %v", src, err)
	}
	return e
}

// mustEval parses src and evaluates it on s, or stops the test.
func mustEval(tb testing.TB, src string, s ohlcv.Series) []float64 {
	tb.Helper()
	out, err := mustParse(tb, src).Eval(s)
	if err != nil {
		tb.Fatalf("Eval(%q): %v", src, err)
	}
	return out
}

// approx compares floats within 1e-9 and treats NaN as equal to NaN.
var approx = []cmp.Option{cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateNaNs()}

// approxLoose compares within 1e-6, for running sums of squares.
var approxLoose = []cmp.Option{cmpopts.EquateApprox(1e-6, 1e-6), cmpopts.EquateNaNs()}

// TestEvalHandComputed checks each function on closes against values worked
// out by hand (the comment gives the arithmetic where it is not obvious).
func TestEvalHandComputed(t *testing.T) {
	tests := []struct {
		src  string
		want []float64
	}{
		{"close", closes},
		{"close * 2 - 1", []float64{1, 3, 5, 7, 9, 7, 5, 3, 5, 7}},
		{"sma(close, 3)", []float64{nan, nan, 2, 3, 4, 13.0 / 3, 4, 3, 8.0 / 3, 3}},
		// EMA k = 2/(3+1) = 0.5, seeded with the mean of the first 3 values (2).
		{"ema(close, 3)", []float64{nan, nan, 2, 3, 4, 4, 3.5, 2.75, 2.875, 3.4375}},
		// Weights 1, 2, 3 (newest heaviest) over 6.
		{"wma(close, 3)", []float64{nan, nan, 14.0 / 6, 20.0 / 6, 26.0 / 6, 26.0 / 6, 22.0 / 6, 16.0 / 6, 16.0 / 6, 20.0 / 6}},
		// Population standard deviation of two values is |a-b|/2.
		{"stddev(close, 2)", []float64{nan, .5, .5, .5, .5, .5, .5, .5, .5, .5}},
		{"highest(close, 3)", []float64{nan, nan, 3, 4, 5, 5, 5, 4, 3, 4}},
		{"lowest(close, 3)", []float64{nan, nan, 1, 2, 3, 4, 3, 2, 2, 2}},
		{"sum(close, 3)", []float64{nan, nan, 6, 9, 12, 13, 12, 9, 8, 9}},
		{"mom(close, 2)", []float64{nan, nan, 2, 2, 2, 0, -2, -2, 0, 2}},
		{"roc(close, 1)", []float64{nan, 100, 50, 100.0 / 3, 25, -20, -25, -100.0 / 3, 50, 100.0 / 3}},
		{"close[1]", []float64{nan, 1, 2, 3, 4, 5, 4, 3, 2, 3}},
		{"close[0]", closes},
		{"lag(close, 2)", []float64{nan, nan, 1, 2, 3, 4, 5, 4, 3, 2}},
		{"close[1][1]", []float64{nan, nan, 1, 2, 3, 4, 5, 4, 3, 2}},
		{"close[12]", []float64{nan, nan, nan, nan, nan, nan, nan, nan, nan, nan}},
		{"change(close)", []float64{nan, 1, 1, 1, 1, -1, -1, -1, 1, 1}},
		{"change(close, 2)", []float64{nan, nan, 2, 2, 2, 0, -2, -2, 0, 2}},
		// A window restarts after the undefined bar 0 of close[1].
		{"sma(close[1], 2)", []float64{nan, nan, 1.5, 2.5, 3.5, 4.5, 4.5, 3.5, 2.5, 2.5}},
		{"sma(close, 11)", []float64{nan, nan, nan, nan, nan, nan, nan, nan, nan, nan}},
		{"close > 3", []float64{0, 0, 0, 1, 1, 1, 0, 0, 0, 1}},
		{"close >= 4 and close != 5", []float64{0, 0, 0, 1, 0, 1, 0, 0, 0, 1}},
		{"close < 2 or close == 5", []float64{1, 0, 0, 0, 1, 0, 0, 0, 0, 0}},
		{"not close <= 3", []float64{0, 0, 0, 1, 1, 1, 0, 0, 0, 1}},
		{"close > 3 ? close : -close", []float64{-1, -2, -3, 4, 5, 4, -3, -2, -3, 4}},
		{"if(close > 3, 1, close[1])", []float64{nan, 1, 2, 1, 1, 1, 4, 3, 2, 1}},
		{"min(close, 4, close[1])", []float64{nan, 1, 2, 3, 4, 4, 3, 2, 2, 3}},
		{"max(close, 3)", []float64{3, 3, 3, 4, 5, 4, 3, 3, 3, 4}},
		{"abs(close - 3)", []float64{2, 1, 0, 1, 2, 1, 0, 1, 0, 1}},
		{"sqrt(close - 3)", []float64{nan, nan, 0, 1, math.Sqrt2, 1, 0, nan, 0, 1}},
		{"log(close - 3)", []float64{nan, nan, nan, 0, math.Ln2, 0, nan, nan, nan, 0}},
		{"exp(close - 4)", []float64{math.Exp(-3), math.Exp(-2), math.Exp(-1), 1, math.E, 1, math.Exp(-1), math.Exp(-2), math.Exp(-1), 1}},
		{"(close - 3) ^ 2", []float64{4, 1, 0, 1, 4, 1, 0, 1, 0, 1}},
		{"1 / (close - 3)", []float64{-.5, -1, nan, 1, .5, 1, nan, -1, nan, 1}},
		{"0 / (close - 3)", []float64{0, 0, nan, 0, 0, 0, nan, 0, nan, 0}},
		{"na(close[2])", []float64{1, 1, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"nz(close[2])", []float64{0, 0, 1, 2, 3, 4, 5, 4, 3, 2}},
		{"nz(close[2], close)", []float64{1, 2, 1, 2, 3, 4, 5, 4, 3, 2}},
		{"2 + 3 * 4 - 2 ^ 3 ^ 2 / 64", []float64{6, 6, 6, 6, 6, 6, 6, 6, 6, 6}}, // 2+12-512/64
		{"-2 ^ 2 + (-2) ^ 2 + 2 ^ -1", []float64{.5, .5, .5, .5, .5, .5, .5, .5, .5, .5}},
		{"10 - 4 - 3 + 2 * 3 / 4", []float64{4.5, 4.5, 4.5, 4.5, 4.5, 4.5, 4.5, 4.5, 4.5, 4.5}},
		{"0 ? 1 : 0 ? 2 : 3", []float64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}},
		{"sma(5, 3)", []float64{nan, nan, 5, 5, 5, 5, 5, 5, 5, 5}},
		{"sma(close, 2 * 2 - 1)", []float64{nan, nan, 2, 3, 4, 13.0 / 3, 4, 3, 8.0 / 3, 3}},
	}
	bars := ohlcv.Series{Close: closes}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got := mustEval(t, tt.src, bars)
			if diff := cmp.Diff(tt.want, got, approx...); diff != "" {
				t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

// TestEvalDerivedSeries checks hl2, hlc3, ohlc4 and atr on two bars worked
// by hand.
func TestEvalDerivedSeries(t *testing.T) {
	bars := ohlcv.Series{
		Open:  []float64{10, 11, 12},
		High:  []float64{12, 14, 13},
		Low:   []float64{9, 10, 10},
		Close: []float64{11, 13, 11},
	}
	tests := []struct {
		src  string
		want []float64
	}{
		{"hl2", []float64{10.5, 12, 11.5}},
		{"hlc3", []float64{32.0 / 3, 37.0 / 3, 34.0 / 3}},
		{"ohlc4", []float64{10.5, 12, 11.5}},
		// True range from bar 1: max(14-10, |14-11|, |10-11|) = 4, then
		// max(13-10, |13-13|, |10-13|) = 3. ATR(1) is the true range.
		{"atr(1)", []float64{nan, 4, 3}},
		{"atr(2)", []float64{nan, nan, 3.5}},
	}
	for _, tt := range tests {
		got := mustEval(t, tt.src, bars)
		if diff := cmp.Diff(tt.want, got, approx...); diff != "" {
			t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tt.src, diff)
		}
	}
}

// TestCrossAndBarsSince checks crossover, crossunder and barssince bar by
// bar: a touch (x == y) followed by x > y is a cross; x > y on both bars is
// not.
func TestCrossAndBarsSince(t *testing.T) {
	x := []float64{1, 2, 3, 2, 1, 2, 2, 3}
	tests := []struct {
		src  string
		want []float64
	}{
		// Bar 2: 3 > 2 after 2 <= 2. Bar 7: 3 > 2 after 2 <= 2.
		{"crossover(close, 2)", []float64{nan, 0, 1, 0, 0, 0, 0, 1}},
		// Bar 4: 1 < 2 after 2 >= 2.
		{"crossunder(close, 2)", []float64{nan, 0, 0, 0, 1, 0, 0, 0}},
		{"crossover(2, close)", []float64{nan, 0, 0, 0, 1, 0, 0, 0}},
		{"barssince(crossover(close, 2))", []float64{nan, nan, 0, 1, 2, 3, 4, 0}},
		{"barssince(close == 1)", []float64{0, 1, 2, 3, 0, 1, 2, 3}},
		{"barssince(close > 5)", []float64{nan, nan, nan, nan, nan, nan, nan, nan}},
	}
	for _, tt := range tests {
		got := mustEval(t, tt.src, ohlcv.Series{Close: x})
		if diff := cmp.Diff(tt.want, got, approx...); diff != "" {
			t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tt.src, diff)
		}
	}

	// Two moving series, not a scalar snapshot: close crosses its own
	// 3-bar SMA. On closes, SMA(3) = _, _, 2, 3, 4, 4.33, 4, 3, 2.67, 3:
	// bar 5: 4 < 4.33 after 5 >= 4 (under); bar 8: 3 > 2.67 after 2 <= 3 (over).
	bars := ohlcv.Series{Close: closes}
	for _, tt := range []struct {
		src  string
		want []float64
	}{
		{"crossover(close, sma(close, 3))", []float64{nan, nan, nan, 0, 0, 0, 0, 0, 1, 0}},
		{"crossunder(close, sma(close, 3))", []float64{nan, nan, nan, 0, 0, 1, 0, 0, 0, 0}},
		{"barssince(crossover(close, sma(close, 3)))", []float64{nan, nan, nan, nan, nan, nan, nan, nan, 0, 1}},
		{"barssince(close >= 4)", []float64{nan, nan, nan, 0, 0, 0, 1, 2, 3, 0}},
	} {
		got := mustEval(t, tt.src, bars)
		if diff := cmp.Diff(tt.want, got, approx...); diff != "" {
			t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tt.src, diff)
		}
	}
}

// TestNaNPropagation checks the value of each construct around an
// undefined input bar (bar 2).
func TestNaNPropagation(t *testing.T) {
	bars := ohlcv.Series{Close: []float64{1, 2, nan, 4, 5, 6}}
	tests := []struct {
		src  string
		want []float64
	}{
		{"close + 1", []float64{2, 3, nan, 5, 6, 7}},
		{"close > 3", []float64{0, 0, nan, 1, 1, 1}},
		{"close > 3 and 0", []float64{0, 0, nan, 0, 0, 0}},
		{"not close", []float64{0, 0, nan, 0, 0, 0}},
		{"close ^ 0", []float64{1, 1, nan, 1, 1, 1}},
		{"if(close > 3, 1, 0)", []float64{0, 0, nan, 1, 1, 1}},
		{"close > 3 ? 1 : 0", []float64{0, 0, nan, 1, 1, 1}},
		{"max(close, 3)", []float64{3, 3, nan, 4, 5, 6}},
		{"na(close)", []float64{0, 0, 1, 0, 0, 0}},
		{"nz(close)", []float64{1, 2, 0, 4, 5, 6}},
		{"nz(close, -1)", []float64{1, 2, -1, 4, 5, 6}},
		{"close[1]", []float64{nan, 1, 2, nan, 4, 5}},
		{"change(close)", []float64{nan, 1, nan, nan, 1, 1}},
		// The window restarts after the gap: runs [1 2] and [4 5 6].
		{"sma(close, 2)", []float64{nan, 1.5, nan, nan, 4.5, 5.5}},
		{"sum(close, 3)", []float64{nan, nan, nan, nan, nan, 15}},
		{"ema(close, 2)", []float64{nan, 1.5, nan, nan, 4.5, 5.5}},
		{"crossover(close, 3)", []float64{nan, 0, nan, nan, 0, 0}},
		{"barssince(close > 1)", []float64{nan, 0, 1, 0, 0, 0}},
	}
	for _, tt := range tests {
		got := mustEval(t, tt.src, bars)
		if diff := cmp.Diff(tt.want, got, approx...); diff != "" {
			t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tt.src, diff)
		}
	}
}

// TestEvalNeverInf checks that infinite intermediate results become NaN.
func TestEvalNeverInf(t *testing.T) {
	bars := ohlcv.Series{Close: []float64{0, 1e300, -1e300}}
	for _, src := range []string{"1 / close", "close * close", "exp(close)", "log(close)", "close ^ 2", "-1 / close", "close - -close"} {
		for i, v := range mustEval(t, src, bars) {
			if math.IsInf(v, 0) {
				t.Errorf("Eval(%q)[%d] = %v, want finite or NaN", src, i, v)
			}
		}
	}
}

// TestEvalInputs checks the checks on the Series argument.
func TestEvalInputs(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		in      ohlcv.Series
		want    []float64
		wantErr error
	}{
		{"empty", "sma(close, 3)", ohlcv.Series{}, []float64{}, nil},
		{"constant", "1 + 2", ohlcv.Series{Close: []float64{5, 6}}, []float64{3, 3}, nil},
		{"unused nil field", "close", ohlcv.Series{Close: []float64{5}}, []float64{5}, nil},
		{"length mismatch", "close", ohlcv.Series{Close: []float64{1, 2}, Open: []float64{1}}, nil, tradekit.ErrInvalid},
		{"missing field", "volume + close", ohlcv.Series{Close: []float64{1}}, nil, tradekit.ErrInvalid},
		{"atr reads high", "atr(1)", ohlcv.Series{Close: []float64{1}, Low: []float64{1}}, nil, tradekit.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mustParse(t, tt.src).Eval(tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Eval error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, approx...); diff != "" {
				t.Errorf("Eval mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEvalDoesNotModifyInput checks that the caller's slices are left alone
// and that the result never aliases them.
func TestEvalDoesNotModifyInput(t *testing.T) {
	in := []float64{1, 2, 3, 4}
	keep := append([]float64(nil), in...)
	for _, src := range []string{"close", "close + 0", "-close", "sma(close, 1)", "close[0]", "nz(close)"} {
		out := mustEval(t, src, ohlcv.Series{Close: in})
		out[0] = 99
		if diff := cmp.Diff(keep, in); diff != "" {
			t.Fatalf("Eval(%q) changed its input (-was +now):\n%s", src, diff)
		}
	}
}

// TestExprReuse checks that one Expr evaluates twice to the same values
// (evaluation keeps no state in the tree).
func TestExprReuse(t *testing.T) {
	e := mustParse(t, "(close - sma(close, 3)) / stddev(close, 3) + close[1]")
	a, _ := e.Eval(ohlcv.Series{Close: closes})
	b, _ := e.Eval(ohlcv.Series{Close: closes})
	if diff := cmp.Diff(a, b, approx...); diff != "" {
		t.Errorf("second Eval differs (-first +second):\n%s", diff)
	}
}

// TestConcurrentEval evaluates one Expr from several goroutines; run with
// -race, it shows that an Expr holds no evaluation state.
func TestConcurrentEval(t *testing.T) {
	e := mustParse(t, "crossover(ema(close, 3), sma(close, 5)) + barssince(close > close[1]) + nz(close[2])")
	want, _ := e.Eval(ohlcv.Series{Close: closes})
	done := make(chan []float64)
	for range 4 {
		go func() {
			got, _ := e.Eval(ohlcv.Series{Close: closes})
			done <- got
		}()
	}
	for range 4 {
		if diff := cmp.Diff(want, <-done, approx...); diff != "" {
			t.Errorf("concurrent Eval differs (-want +got):\n%s", diff)
		}
	}
}
