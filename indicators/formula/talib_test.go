package formula

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	talib "github.com/markcheno/go-talib"

	"github.com/tradekit/tradekit/indicators"
	"github.com/tradekit/tradekit/ohlcv"
)

// randomBars is a seeded random walk of n daily bars.
func randomBars(n int, seed uint64) ohlcv.Series {
	r := rand.New(rand.NewPCG(seed, 1))
	var s ohlcv.Series
	price := 100.0
	for range n {
		o := price
		price *= math.Exp(r.NormFloat64() * 0.01)
		c := price
		h := max(o, c) * (1 + r.Float64()*0.005)
		l := min(o, c) * (1 - r.Float64()*0.005)
		s.Open = append(s.Open, o)
		s.High = append(s.High, h)
		s.Low = append(s.Low, l)
		s.Close = append(s.Close, c)
		s.Volume = append(s.Volume, 1e6*(1+r.Float64()))
	}
	return s
}

// TestTALibParity checks each indicator function of the language against
// github.com/markcheno/go-talib, a port of TA-Lib independent of this
// module. go-talib writes 0 during the warm-up where Tradekit writes NaN, so
// the warm-up is checked to be NaN and the rest compared within 1e-9
// (relative).
func TestTALibParity(t *testing.T) {
	s := randomBars(300, 7)
	c := s.Close
	bbU, bbM, bbL := talib.BBands(c, 20, 2.5, 2.5, talib.SMA)
	stochK, stochD := talib.Stoch(s.High, s.Low, c, 14, 3, talib.SMA, 3, talib.SMA)
	tests := []struct {
		src      string
		want     []float64
		lookback int
	}{
		{"sma(close, 20)", talib.Sma(c, 20), 19},
		{"ema(close, 20)", talib.Ema(c, 20), 19},
		{"wma(close, 20)", talib.Wma(c, 20), 19},
		{"dema(close, 10)", talib.Dema(c, 10), 18},
		{"tema(close, 10)", talib.Tema(c, 10), 27},
		{"rsi(close, 14)", talib.Rsi(c, 14), 14},
		{"roc(close, 10)", talib.Roc(c, 10), 10},
		{"mom(close, 10)", talib.Mom(c, 10), 10},
		{"stddev(close, 20)", talib.StdDev(c, 20, 1), 19},
		{"highest(high, 20)", talib.Max(s.High, 20), 19},
		{"lowest(low, 20)", talib.Min(s.Low, 20), 19},
		{"sum(volume, 20)", talib.Sum(s.Volume, 20), 19},
		{"atr(14)", talib.Atr(s.High, s.Low, c, 14), 14},
		{"adx(14)", talib.Adx(s.High, s.Low, c, 14), 27},
		{"plus_di(14)", talib.PlusDI(s.High, s.Low, c, 14), 14},
		{"minus_di(14)", talib.MinusDI(s.High, s.Low, c, 14), 14},
		{"cci(20)", talib.Cci(s.High, s.Low, c, 20), 19},
		{"willr(14)", talib.WillR(s.High, s.Low, c, 14), 13},
		{"mfi(14)", talib.Mfi(s.High, s.Low, c, s.Volume, 14), 14},
		{"obv()", talib.Obv(c, s.Volume), 0},
		{"stoch_k()", stochK, 17},
		{"stoch_d(14, 3, 3)", stochD, 17},
		{"bb_upper(close, 20, 2.5)", bbU, 19},
		{"bb_middle(close, 20)", bbM, 19},
		{"bb_lower(close, 20, 2.5)", bbL, 19},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got := mustEval(t, tt.src, s)
			for i := range got {
				if i < tt.lookback {
					if !math.IsNaN(got[i]) {
						t.Fatalf("bar %d = %v, want NaN during the warm-up", i, got[i])
					}
					continue
				}
				if w := tt.want[i]; math.Abs(got[i]-w) > 1e-9*math.Max(1, math.Abs(w)) {
					t.Fatalf("bar %d = %.12g, want %.12g (go-talib)", i, got[i], w)
				}
			}
		})
	}
}

// TestMACDWiring checks that macd, macd_signal and macd_hist pick the right
// output of indicators.MACD (whose TA-Lib parity is tested in its package;
// go-talib's Macd departs from TA-Lib C), with the defaults 12, 26, 9, and
// that hist = macd - signal.
func TestMACDWiring(t *testing.T) {
	s := randomBars(200, 3)
	m, sig, h := indicators.MACD(s.Close, 12, 26, 9)
	for _, tt := range []struct {
		src  string
		want []float64
	}{
		{"macd(close)", m}, {"macd_signal(close)", sig}, {"macd_hist(close)", h},
		{"macd(close, 12, 26, 9)", m}, {"macd(close) - macd_signal(close)", h},
	} {
		if diff := cmp.Diff(tt.want, mustEval(t, tt.src, s), approx...); diff != "" {
			t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tt.src, diff)
		}
	}
}
