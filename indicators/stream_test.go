package indicators

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// ohlcv is a random bar series for the stream-versus-batch properties.
type ohlcv struct {
	open, high, low, close, volume []float64
}

// randomBars returns n bars of a random walk with flat stretches and gaps,
// from a fixed seed.
func randomBars(seed uint64, n int) ohlcv {
	r := rand.New(rand.NewPCG(seed, 99))
	b := ohlcv{
		open: make([]float64, n), high: make([]float64, n), low: make([]float64, n),
		close: make([]float64, n), volume: make([]float64, n),
	}
	x := 50 + r.Float64()*100
	for i := 0; i < n; i++ {
		switch {
		case r.IntN(40) == 0:
			x *= 0.5 + r.Float64() // a gap
		case r.IntN(4) == 0:
			// unchanged close: flat stretch
		default:
			x *= 1 + (r.Float64()-0.5)*0.05
		}
		o := x * (1 + (r.Float64()-0.5)*0.01)
		b.open[i], b.close[i] = o, x
		b.high[i] = math.Max(o, x) * (1 + r.Float64()*0.01)
		b.low[i] = math.Min(o, x) * (1 - r.Float64()*0.01)
		if r.IntN(10) == 0 {
			b.high[i], b.low[i] = math.Max(o, x), math.Min(o, x)
		}
		b.volume[i] = float64(r.IntN(100000))
	}
	return b
}

// streamCase pairs a batch function with the stream that must agree with
// it. step gives the stream's outputs for bar i, peeking or committing.
type streamCase struct {
	name   string
	batch  func(b ohlcv) [][]float64
	stream func() func(b ohlcv, i int, peek bool) []float64
}

// streamCases lists every stream with the batch function it mirrors.
func streamCases() []streamCase {
	var cs []streamCase
	addStream := func(name string, batch func(b ohlcv) [][]float64, stream func() func(b ohlcv, i int, peek bool) []float64) {
		cs = append(cs, streamCase{name, batch, stream})
	}
	contractStreams(addStream)
	extraStreams(addStream)
	otherStreams(addStream)
	return cs
}

type addStreamFunc func(name string, batch func(b ohlcv) [][]float64, stream func() func(b ohlcv, i int, peek bool) []float64)

func one(v float64) []float64         { return []float64{v} }
func three(a, b, c float64) []float64 { return []float64{a, b, c} }
func two(a, b float64) []float64      { return []float64{a, b} }
func outs(v ...[]float64) [][]float64 { return v }

func contractStreams(addStream addStreamFunc) {
	for _, p := range []int{1, 2, 3, 7, 14, 30} {
		p := p
		addStream(fmt.Sprintf("SMA/%d", p), func(b ohlcv) [][]float64 { return outs(SMA(b.close, p)) },
			func() func(ohlcv, int, bool) []float64 {
				s := NewSMAStream(p)
				return func(b ohlcv, i int, peek bool) []float64 {
					if peek {
						return one(s.Peek(b.close[i]))
					}
					return one(s.Next(b.close[i]))
				}
			})
		addStream(fmt.Sprintf("EMA/%d", p), func(b ohlcv) [][]float64 { return outs(EMA(b.close, p)) },
			func() func(ohlcv, int, bool) []float64 {
				s := NewEMAStream(p)
				return func(b ohlcv, i int, peek bool) []float64 {
					if peek {
						return one(s.Peek(b.close[i]))
					}
					return one(s.Next(b.close[i]))
				}
			})
		addStream(fmt.Sprintf("ATR/%d", p), func(b ohlcv) [][]float64 { return outs(ATR(b.high, b.low, b.close, p)) },
			func() func(ohlcv, int, bool) []float64 {
				s := NewATRStream(p)
				return func(b ohlcv, i int, peek bool) []float64 {
					if peek {
						return one(s.Peek(b.high[i], b.low[i], b.close[i]))
					}
					return one(s.Next(b.high[i], b.low[i], b.close[i]))
				}
			})
		addStream(fmt.Sprintf("BollingerBands/%d", p), func(b ohlcv) [][]float64 {
			u, m, l := BollingerBands(b.close, p, 2)
			return outs(u, m, l)
		}, func() func(ohlcv, int, bool) []float64 {
			s := NewBollingerStream(p, 2)
			return func(b ohlcv, i int, peek bool) []float64 {
				if peek {
					return three(s.Peek(b.close[i]))
				}
				return three(s.Next(b.close[i]))
			}
		})
		if p >= 2 {
			addStream(fmt.Sprintf("RSI/%d", p), func(b ohlcv) [][]float64 { return outs(RSI(b.close, p)) },
				func() func(ohlcv, int, bool) []float64 {
					s := NewRSIStream(p)
					return func(b ohlcv, i int, peek bool) []float64 {
						if peek {
							return one(s.Peek(b.close[i]))
						}
						return one(s.Next(b.close[i]))
					}
				})
		}
	}
	for _, m := range [][3]int{{12, 26, 9}, {26, 12, 9}, {1, 1, 1}, {3, 3, 2}, {2, 5, 1}} {
		m := m
		addStream(fmt.Sprintf("MACD/%d,%d,%d", m[0], m[1], m[2]), func(b ohlcv) [][]float64 {
			x, y, z := MACD(b.close, m[0], m[1], m[2])
			return outs(x, y, z)
		}, func() func(ohlcv, int, bool) []float64 {
			s := NewMACDStream(m[0], m[1], m[2])
			return func(b ohlcv, i int, peek bool) []float64 {
				if peek {
					return three(s.Peek(b.close[i]))
				}
				return three(s.Next(b.close[i]))
			}
		})
	}
}

// TestStreamMatchesBatch checks, on random series of several lengths, that
// every stream gives the batch value at every index (NaN where the batch is
// NaN, otherwise the same float64), and that Peek(x) returns what Next(x)
// then returns without disturbing the stream (called twice per bar, with a
// decoy value first).
func TestStreamMatchesBatch(t *testing.T) {
	for _, sc := range streamCases() {
		t.Run(sc.name, func(t *testing.T) {
			for seed, n := range []int{0, 1, 5, 31, 400} {
				b := randomBars(uint64(seed), n)
				decoy := randomBars(uint64(seed)+1000, n)
				want := sc.batch(b)
				step := sc.stream()
				for i := 0; i < n; i++ {
					step(decoy, i, true) // a forming bar that then changes
					p := step(b, i, true)
					got := step(b, i, false)
					for k := range want {
						if !sameFloat(got[k], want[k][i]) {
							t.Fatalf("n=%d: output %d at %d: stream %v, batch %v", n, k, i, got[k], want[k][i])
						}
						if !sameFloat(p[k], got[k]) {
							t.Fatalf("n=%d: output %d at %d: Peek %v, Next %v", n, k, i, p[k], got[k])
						}
					}
				}
			}
		})
	}
}

// sameFloat is equality where NaN equals NaN.
func sameFloat(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}
