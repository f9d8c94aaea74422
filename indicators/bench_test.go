package indicators

import (
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
// variant writing into caller-provided slices.

const benchN = 1_000_000

var benchData = sync.OnceValue(func() ohlcv { return randomBars(7, benchN) })

func BenchmarkSMA(b *testing.B) {
	d := benchData()
	b.Run("tradekit", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = SMA(d.close, 20)
		}
	})
	b.Run("gotalib", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = talib.Sma(d.close, 20)
		}
	})
	b.Run("into", func(b *testing.B) {
		dst := make([]float64, benchN)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			SMAInto(dst, d.close, 20)
		}
	})
}

func BenchmarkEMA(b *testing.B) {
	d := benchData()
	b.Run("tradekit", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = EMA(d.close, 20)
		}
	})
	b.Run("gotalib", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = talib.Ema(d.close, 20)
		}
	})
	b.Run("into", func(b *testing.B) {
		dst := make([]float64, benchN)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			EMAInto(dst, d.close, 20)
		}
	})
}

func BenchmarkRSI(b *testing.B) {
	d := benchData()
	b.Run("tradekit", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = RSI(d.close, 14)
		}
	})
	b.Run("gotalib", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = talib.Rsi(d.close, 14)
		}
	})
	b.Run("into", func(b *testing.B) {
		dst := make([]float64, benchN)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			RSIInto(dst, d.close, 14)
		}
	})
}

func BenchmarkATR(b *testing.B) {
	d := benchData()
	b.Run("tradekit", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = ATR(d.high, d.low, d.close, 14)
		}
	})
	b.Run("gotalib", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = talib.Atr(d.high, d.low, d.close, 14)
		}
	})
	b.Run("into", func(b *testing.B) {
		dst := make([]float64, benchN)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			ATRInto(dst, d.high, d.low, d.close, 14)
		}
	})
}

func BenchmarkMACD(b *testing.B) {
	d := benchData()
	b.Run("tradekit", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _, _ = MACD(d.close, 12, 26, 9)
		}
	})
	b.Run("gotalib", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _, _ = talib.Macd(d.close, 12, 26, 9)
		}
	})
	b.Run("into", func(b *testing.B) {
		m, s, h := make([]float64, benchN), make([]float64, benchN), make([]float64, benchN)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			MACDInto(m, s, h, d.close, 12, 26, 9)
		}
	})
}

func BenchmarkBollingerBands(b *testing.B) {
	d := benchData()
	b.Run("tradekit", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _, _ = BollingerBands(d.close, 20, 2)
		}
	})
	b.Run("gotalib", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _, _ = talib.BBands(d.close, 20, 2, 2, talib.SMA)
		}
	})
	b.Run("into", func(b *testing.B) {
		u, m, l := make([]float64, benchN), make([]float64, benchN), make([]float64, benchN)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			BollingerBandsInto(u, m, l, d.close, 20, 2)
		}
	})
}

// BenchmarkStream measures the per-bar cost of the streams.
func BenchmarkStream(b *testing.B) {
	d := benchData()
	b.Run("SMA", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			s := NewSMAStream(20)
			for _, x := range d.close {
				s.Next(x)
			}
		}
	})
	b.Run("MACD", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			s := NewMACDStream(12, 26, 9)
			for _, x := range d.close {
				s.Next(x)
			}
		}
	})
}
