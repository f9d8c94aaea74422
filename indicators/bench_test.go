package indicators

import (
	"runtime"
	"sync"
	"testing"

	talib "github.com/markcheno/go-talib"
)

// Run with:
//
//	go test ./indicators -run '^$' -bench . -benchmem -benchtime=20x
//
// Each contract function runs on the same 1,000,000 bars as
// github.com/markcheno/go-talib's equivalent ("gotalib"); "into" is the
// variant writing into caller-provided slices (0 allocs).

const benchN = 1_000_000

var benchData = sync.OnceValue(func() ohlcv { return randomBars(7, benchN) })

// run times f in a steady state: one untimed call first, so that whichever
// sub-benchmark runs first does not alone pay for growing the heap to the
// outputs' size, then a collected heap, so that none pays for another's
// garbage.
func run(b *testing.B, f func()) {
	b.Helper()
	f()
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f()
	}
}

func BenchmarkSMA(b *testing.B) {
	d := benchData()
	dst := make([]float64, benchN)
	b.Run("tradekit", func(b *testing.B) { run(b, func() { _ = SMA(d.close, 20) }) })
	b.Run("gotalib", func(b *testing.B) { run(b, func() { _ = talib.Sma(d.close, 20) }) })
	b.Run("into", func(b *testing.B) { run(b, func() { SMAInto(dst, d.close, 20) }) })
}

func BenchmarkEMA(b *testing.B) {
	d := benchData()
	dst := make([]float64, benchN)
	b.Run("tradekit", func(b *testing.B) { run(b, func() { _ = EMA(d.close, 20) }) })
	b.Run("gotalib", func(b *testing.B) { run(b, func() { _ = talib.Ema(d.close, 20) }) })
	b.Run("into", func(b *testing.B) { run(b, func() { EMAInto(dst, d.close, 20) }) })
}

func BenchmarkRSI(b *testing.B) {
	d := benchData()
	dst := make([]float64, benchN)
	b.Run("tradekit", func(b *testing.B) { run(b, func() { _ = RSI(d.close, 14) }) })
	b.Run("gotalib", func(b *testing.B) { run(b, func() { _ = talib.Rsi(d.close, 14) }) })
	b.Run("into", func(b *testing.B) { run(b, func() { RSIInto(dst, d.close, 14) }) })
}

func BenchmarkATR(b *testing.B) {
	d := benchData()
	dst := make([]float64, benchN)
	b.Run("tradekit", func(b *testing.B) { run(b, func() { _ = ATR(d.high, d.low, d.close, 14) }) })
	b.Run("gotalib", func(b *testing.B) { run(b, func() { _ = talib.Atr(d.high, d.low, d.close, 14) }) })
	b.Run("into", func(b *testing.B) { run(b, func() { ATRInto(dst, d.high, d.low, d.close, 14) }) })
}

func BenchmarkMACD(b *testing.B) {
	d := benchData()
	m, s, h := make([]float64, benchN), make([]float64, benchN), make([]float64, benchN)
	b.Run("tradekit", func(b *testing.B) { run(b, func() { _, _, _ = MACD(d.close, 12, 26, 9) }) })
	b.Run("gotalib", func(b *testing.B) { run(b, func() { _, _, _ = talib.Macd(d.close, 12, 26, 9) }) })
	b.Run("into", func(b *testing.B) { run(b, func() { MACDInto(m, s, h, d.close, 12, 26, 9) }) })
}

func BenchmarkBollingerBands(b *testing.B) {
	d := benchData()
	u, m, l := make([]float64, benchN), make([]float64, benchN), make([]float64, benchN)
	b.Run("tradekit", func(b *testing.B) { run(b, func() { _, _, _ = BollingerBands(d.close, 20, 2) }) })
	b.Run("gotalib", func(b *testing.B) { run(b, func() { _, _, _ = talib.BBands(d.close, 20, 2, 2, talib.SMA) }) })
	b.Run("into", func(b *testing.B) { run(b, func() { BollingerBandsInto(u, m, l, d.close, 20, 2) }) })
}

// BenchmarkFormulaHelpers covers the functions indicators/formula calls,
// each beside go-talib where it has one.
func BenchmarkFormulaHelpers(b *testing.B) {
	d := benchData()
	for _, bb := range []struct {
		name   string
		ours   func()
		theirs func()
	}{
		{"WMA", func() { _ = WMA(d.close, 20) }, func() { _ = talib.Wma(d.close, 20) }},
		{"DEMA", func() { _ = DEMA(d.close, 20) }, func() { _ = talib.Dema(d.close, 20) }},
		{"TEMA", func() { _ = TEMA(d.close, 20) }, func() { _ = talib.Tema(d.close, 20) }},
		{"StdDev", func() { _ = StdDev(d.close, 20, 1) }, func() { _ = talib.StdDev(d.close, 20, 1) }},
		{"Highest", func() { _ = Highest(d.close, 20) }, func() { _ = talib.Max(d.close, 20) }},
		{"Lowest", func() { _ = Lowest(d.close, 20) }, func() { _ = talib.Min(d.close, 20) }},
		{"Sum", func() { _ = Sum(d.close, 20) }, func() { _ = talib.Sum(d.close, 20) }},
		{"ROC", func() { _ = ROC(d.close, 10) }, func() { _ = talib.Roc(d.close, 10) }},
		{"Momentum", func() { _ = Momentum(d.close, 10) }, func() { _ = talib.Mom(d.close, 10) }},
	} {
		b.Run(bb.name+"/tradekit", func(b *testing.B) { run(b, bb.ours) })
		b.Run(bb.name+"/gotalib", func(b *testing.B) { run(b, bb.theirs) })
	}
}

// BenchmarkStream measures the per-bar cost of streams over 1e6 bars.
func BenchmarkStream(b *testing.B) {
	d := benchData()
	b.Run("SMA", func(b *testing.B) {
		run(b, func() {
			s := NewSMAStream(20)
			for _, x := range d.close {
				s.Next(x)
			}
		})
	})
	b.Run("MACD", func(b *testing.B) {
		run(b, func() {
			s := NewMACDStream(12, 26, 9)
			for _, x := range d.close {
				s.Next(x)
			}
		})
	})
}
