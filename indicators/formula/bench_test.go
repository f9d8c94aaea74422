package formula

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit/ohlcv"
)

// zscoreLoop is the hand-written Go equivalent of the formula
// (close - sma(close, p)) / stddev(close, p): a rolling mean and population
// standard deviation from running sums, written plainly.
func zscoreLoop(x []float64, p int) []float64 {
	out := make([]float64, len(x))
	var sum, sumSq float64
	n := float64(p)
	for i, v := range x {
		sum += v
		sumSq += v * v
		if i >= p {
			old := x[i-p]
			sum -= old
			sumSq -= old * old
		}
		if i < p-1 {
			out[i] = math.NaN()
			continue
		}
		mean := sum / n
		sd := math.Sqrt(math.Max(sumSq/n-mean*mean, 0))
		out[i] = (v - mean) / sd
	}
	return out
}

const zscoreSrc = "(close - sma(close, 20)) / stddev(close, 20)"

// TestZScoreMatchesLoop checks the formula against the hand-written loop
// that the benchmark compares it with.
func TestZScoreMatchesLoop(t *testing.T) {
	s := randomBars(5000, 11)
	want := zscoreLoop(s.Close, 20)
	got := mustEval(t, zscoreSrc, ohlcv.Series{Close: s.Close})
	// Running sums of squares lose digits: compare to 1e-6.
	if diff := cmp.Diff(want, got, approxLoose...); diff != "" {
		t.Errorf("formula and loop differ (-loop +formula):\n%s", diff)
	}
}

// BenchmarkZScore compares the formula with the hand-written loop on 1e1,
// 1e3, 1e5 and 1e6 bars.
func BenchmarkZScore(b *testing.B) {
	e := mustParse(b, zscoreSrc)
	for _, n := range []int{1e1, 1e3, 1e5, 1e6} {
		s := ohlcv.Series{Close: randomBars(n, 1).Close}
		b.Run(fmt.Sprintf("formula/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Eval(s); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("loop/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				zscoreLoop(s.Close, 20)
			}
		})
	}
}

// BenchmarkEvalSignal measures a typical trading-signal formula of 21 nodes
// on 1e5 bars.
func BenchmarkEvalSignal(b *testing.B) {
	e := mustParse(b, "crossover(ema(close, 12), ema(close, 26)) and rsi(close, 14) < 70 and volume > sma(volume, 20) ? atr(14) : 0")
	s := randomBars(1e5, 2)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Eval(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse measures parsing and checking a typical formula.
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("crossover(ema(close, 12), ema(close, 26)) and rsi(close, 14) < 70 and volume > sma(volume, 20)"); err != nil {
			b.Fatal(err)
		}
	}
}
