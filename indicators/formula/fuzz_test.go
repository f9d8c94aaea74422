package formula

import (
	"errors"
	"math"
	"testing"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/ohlcv"
)

var fuzzSeeds = []string{
	"close",
	"(close - sma(close, 20)) / stddev(close, 20)",
	"crossover(ema(close, 5), ema(close, 20)) and volume > sma(volume, 10)",
	"close > open ? high - low : -(high - low)",
	"if(rsi(close, 14) < 30, 1, if(rsi(close, 14) > 70, -1, 0))",
	"barssince(crossunder(close, bb_lower(close, 20, 2)))",
	"nz(close[1], open) + lag(hl2, 2) - change(ohlc4, 3)",
	"macd(close) - macd_signal(close, 12, 26, 9) == macd_hist(close)",
	"atr(14) / close * 100 ^ 2 ^ -1",
	"not na(close[3]) or max(abs(log(close)), sqrt(exp(1)), 2e-3)",
	"highest(high, 5) - lowest(low, 5) + sum(volume, 3) + roc(close, 2) + mom(close, 2)",
	"wma(close, 4) + dema(close, 3) + tema(close, 3) + bb_middle(close, 5) + bb_upper(close, 5)",
	"adx(14) > 25 and plus_di(14) > minus_di(14) or cci(20) + willr(14) + mfi(14) + obv() > stoch_k() - stoch_d(5, 3, 3)",
	"sma(close)", "1 +", "((((", "close[close]", "sma(close, 0)", "1e999", "a < b < c",
	"x = 1", "1.", ".5", "1e", "close[", "f(1,", "\xff", "é", "?", "1 ? 2", "min(1)",
	"-2^2", "(-2)^2", "2^3^2", "1 - -1", "not not 1", "1\n+\nsma(close)",
}

// FuzzParse checks that Parse never panics, that every error is a
// *SyntaxError wrapping ErrInvalid with 0 <= Pos <= len(src), that the
// canonical form round-trips and is never longer than the source, and that
// evaluation on a short series neither panics nor yields ±Inf.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	bars := fuzzBars()
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T %v, want *SyntaxError", src, err, err)
			}
			if se.Pos < 0 || se.Pos > len(src) {
				t.Fatalf("Parse(%q): Pos %d outside [0, %d]", src, se.Pos, len(src))
			}
			if se.Line < 1 || se.Col < 1 {
				t.Fatalf("Parse(%q): line %d col %d", src, se.Line, se.Col)
			}
			if !errors.Is(err, tradekit.ErrInvalid) {
				t.Fatalf("Parse(%q) error does not wrap ErrInvalid", src)
			}
			return
		}
		canon := e.String()
		if len(canon) > len(src) {
			t.Fatalf("String() %q is longer than source %q", canon, src)
		}
		e2, err := Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) = %v; it is the String of Parse(%q)", canon, err, src)
		}
		if again := e2.String(); again != canon {
			t.Fatalf("round trip of %q: %q then %q", src, canon, again)
		}
		out, err := e.Eval(bars)
		if err != nil {
			t.Fatalf("Eval(%q): %v", src, err)
		}
		if len(out) != len(bars.Close) {
			t.Fatalf("Eval(%q) returned %d values, want %d", src, len(out), len(bars.Close))
		}
		for i, v := range out {
			if math.IsInf(v, 0) {
				t.Fatalf("Eval(%q)[%d] = %v", src, i, v)
			}
		}
		out2, _ := e2.Eval(bars)
		for i := range out {
			if out[i] != out2[i] && !(math.IsNaN(out[i]) && math.IsNaN(out2[i])) {
				t.Fatalf("Eval differs after round trip of %q at bar %d: %v vs %v", src, i, out[i], out2[i])
			}
		}
	})
}

// fuzzBars is a short series with a gap (NaN) and a zero, to reach the
// NaN, restart and division paths.
func fuzzBars() ohlcv.Series {
	c := []float64{10, 11, 10.5, 12, 0, 13, math.NaN(), 12.5, 14, 13, 15, 14.5, 16, 15, 17}
	s := ohlcv.Series{}
	for i, v := range c {
		s.Close = append(s.Close, v)
		s.Open = append(s.Open, v-0.5)
		s.High = append(s.High, v+1)
		s.Low = append(s.Low, v-1)
		s.Volume = append(s.Volume, float64(100+10*i))
	}
	return s
}

// FuzzEval evaluates fuzzed formulas on fuzzed short series (any float64,
// NaN and ±Inf included, any length up to 40) and checks that Eval neither
// panics nor fails, returns one value per bar and never ±Inf.
func FuzzEval(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, 1.5, -2.0, 0.0, 1e308, uint8(i))
	}
	f.Add("close / (close - close)", math.Inf(1), math.NaN(), -1.0, 3.0, uint8(9))
	f.Fuzz(func(t *testing.T, src string, a, b, c, d float64, n uint8) {
		e, err := Parse(src)
		if err != nil {
			return
		}
		vals := []float64{a, b, c, d, a + b, c * d, 1}
		var s ohlcv.Series
		for i := range int(n % 41) {
			v := vals[i%len(vals)]
			s.Close = append(s.Close, v)
			s.Open = append(s.Open, vals[(i+1)%len(vals)])
			s.High = append(s.High, vals[(i+2)%len(vals)])
			s.Low = append(s.Low, vals[(i+3)%len(vals)])
			s.Volume = append(s.Volume, vals[(i+4)%len(vals)])
		}
		out, err := e.Eval(s)
		if err != nil {
			t.Fatalf("Eval(%q): %v", src, err)
		}
		if len(out) != len(s.Close) {
			t.Fatalf("Eval(%q) returned %d values, want %d", src, len(out), len(s.Close))
		}
		for i, v := range out {
			if math.IsInf(v, 0) {
				t.Fatalf("Eval(%q)[%d] = %v", src, i, v)
			}
		}
	})
}
