package indicators

import (
	"fmt"
	"math"
	"testing"
)

// hlcStream is the shape of the one-output streams over high, low, close.
type hlcStream interface {
	Next(high, low, close float64) float64
	Peek(high, low, close float64) float64
}

func hlcAdapter(batch func(h, l, c []float64, p int) []float64, stream func(p int) hlcStream, minPeriod int) talibAdapter {
	return func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
		if c.period() < minPeriod {
			return nil, nil
		}
		st := stream(c.period())
		return map[string][]float64{"outReal": batch(s.High, s.Low, s.Close, c.period())},
			streamOf(len(s.Close), func(i int) []float64 { return []float64{st.Next(s.High[i], s.Low[i], s.Close[i])} }, "outReal")
	}
}

// otherAdapters adds the TA-Lib adapters of the oscillators, DMI, volume
// indicators and SAR to m.
func otherAdapters(m map[string]talibAdapter) {
	m["WILLR"] = hlcAdapter(WilliamsR, func(p int) hlcStream { return NewWilliamsRStream(p) }, 1)
	m["CCI"] = hlcAdapter(CCI, func(p int) hlcStream { return NewCCIStream(p) }, 1)
	m["ADX"] = hlcAdapter(ADX, func(p int) hlcStream { return dmiPick{NewDMIStream(p), 2} }, 2)
	// PLUS_DI and MINUS_DI of period 1 are TA-Lib fractions; tradekit refuses period 1.
	m["PLUS_DI"] = hlcAdapter(PlusDI, func(p int) hlcStream { return dmiPick{NewDMIStream(p), 0} }, 2)
	m["MINUS_DI"] = hlcAdapter(MinusDI, func(p int) hlcStream { return dmiPick{NewDMIStream(p), 1} }, 2)
	m["STOCH"] = func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
		fk, sk, sd := int(c.Opts["optInFastK_Period"]), int(c.Opts["optInSlowK_Period"]), int(c.Opts["optInSlowD_Period"])
		k, d := Stochastic(s.High, s.Low, s.Close, fk, sk, sd)
		st := NewStochasticStream(fk, sk, sd)
		return map[string][]float64{"outSlowK": k, "outSlowD": d},
			streamOf(len(s.Close), func(i int) []float64 { return two(st.Next(s.High[i], s.Low[i], s.Close[i])) }, "outSlowK", "outSlowD")
	}
	m["OBV"] = func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
		st := NewOBVStream()
		return map[string][]float64{"outReal": OBV(s.Close, s.Volume)},
			streamOf(len(s.Close), func(i int) []float64 { return one(st.Next(s.Close[i], s.Volume[i])) }, "outReal")
	}
	m["MFI"] = func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
		st := NewMFIStream(c.period())
		return map[string][]float64{"outReal": MFI(s.High, s.Low, s.Close, s.Volume, c.period())},
			streamOf(len(s.Close), func(i int) []float64 { return one(st.Next(s.High[i], s.Low[i], s.Close[i], s.Volume[i])) }, "outReal")
	}
	m["SAR"] = func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
		a, mx := c.Opts["optInAcceleration"], c.Opts["optInMaximum"]
		st := NewParabolicSARStream(a, mx)
		return map[string][]float64{"outReal": ParabolicSAR(s.High, s.Low, a, mx)},
			streamOf(len(s.Close), func(i int) []float64 { return one(st.Next(s.High[i], s.Low[i])) }, "outReal")
	}
}

// dmiPick exposes one output of a DMIStream as an hlcStream.
type dmiPick struct {
	s *DMIStream
	k int
}

func (d dmiPick) Next(h, l, c float64) float64 { return three(d.s.Next(h, l, c))[d.k] }
func (d dmiPick) Peek(h, l, c float64) float64 { return three(d.s.Peek(h, l, c))[d.k] }

// otherStreams registers stream-versus-batch cases of the indicators in
// oscillators.go, dmi.go, volume.go, channels.go and sar.go.
func otherStreams(addStream addStreamFunc) {
	for _, p := range []int{1, 2, 3, 7, 14, 30} {
		p := p
		hlc := []struct {
			name   string
			batch  func(h, l, c []float64, p int) []float64
			stream func(p int) hlcStream
			min    int
		}{
			{"WilliamsR", WilliamsR, func(p int) hlcStream { return NewWilliamsRStream(p) }, 1},
			{"CCI", CCI, func(p int) hlcStream { return NewCCIStream(p) }, 1},
			{"ADX", ADX, func(p int) hlcStream { return dmiPick{NewDMIStream(p), 2} }, 2},
			{"PlusDI", PlusDI, func(p int) hlcStream { return dmiPick{NewDMIStream(p), 0} }, 2},
			{"MinusDI", MinusDI, func(p int) hlcStream { return dmiPick{NewDMIStream(p), 1} }, 2},
		}
		for _, h := range hlc {
			if p < h.min {
				continue
			}
			h := h
			addStream(fmt.Sprintf("%s/%d", h.name, p), func(b ohlcv) [][]float64 { return outs(h.batch(b.high, b.low, b.close, p)) },
				func() func(ohlcv, int, bool) []float64 {
					s := h.stream(p)
					return func(b ohlcv, i int, peek bool) []float64 {
						if peek {
							return one(s.Peek(b.high[i], b.low[i], b.close[i]))
						}
						return one(s.Next(b.high[i], b.low[i], b.close[i]))
					}
				})
		}
		addStream(fmt.Sprintf("MFI/%d", p), func(b ohlcv) [][]float64 { return outs(MFI(b.high, b.low, b.close, b.volume, p)) },
			func() func(ohlcv, int, bool) []float64 {
				s := NewMFIStream(p)
				return func(b ohlcv, i int, peek bool) []float64 {
					if peek {
						return one(s.Peek(b.high[i], b.low[i], b.close[i], b.volume[i]))
					}
					return one(s.Next(b.high[i], b.low[i], b.close[i], b.volume[i]))
				}
			})
		addStream(fmt.Sprintf("RollingVWAP/%d", p), func(b ohlcv) [][]float64 { return outs(RollingVWAP(b.high, b.low, b.close, b.volume, p)) },
			func() func(ohlcv, int, bool) []float64 {
				s := NewRollingVWAPStream(p)
				return func(b ohlcv, i int, peek bool) []float64 {
					if peek {
						return one(s.Peek(b.high[i], b.low[i], b.close[i], b.volume[i]))
					}
					return one(s.Next(b.high[i], b.low[i], b.close[i], b.volume[i]))
				}
			})
		addStream(fmt.Sprintf("Donchian/%d", p), func(b ohlcv) [][]float64 { return outs(tuple3(Donchian(b.high, b.low, p))...) },
			func() func(ohlcv, int, bool) []float64 {
				s := NewDonchianStream(p)
				return func(b ohlcv, i int, peek bool) []float64 {
					if peek {
						return three(s.Peek(b.high[i], b.low[i]))
					}
					return three(s.Next(b.high[i], b.low[i]))
				}
			})
		addStream(fmt.Sprintf("Keltner/%d", p), func(b ohlcv) [][]float64 { return outs(tuple3(Keltner(b.high, b.low, b.close, p, 1.5))...) },
			func() func(ohlcv, int, bool) []float64 {
				s := NewKeltnerStream(p, 1.5)
				return func(b ohlcv, i int, peek bool) []float64 {
					if peek {
						return three(s.Peek(b.high[i], b.low[i], b.close[i]))
					}
					return three(s.Next(b.high[i], b.low[i], b.close[i]))
				}
			})
		for _, sk := range []int{1, 3} {
			sk := sk
			addStream(fmt.Sprintf("Stochastic/%d,%d,%d", p, sk, 3), func(b ohlcv) [][]float64 {
				k, d := Stochastic(b.high, b.low, b.close, p, sk, 3)
				return outs(k, d)
			}, func() func(ohlcv, int, bool) []float64 {
				s := NewStochasticStream(p, sk, 3)
				return func(b ohlcv, i int, peek bool) []float64 {
					if peek {
						return two(s.Peek(b.high[i], b.low[i], b.close[i]))
					}
					return two(s.Next(b.high[i], b.low[i], b.close[i]))
				}
			})
		}
	}
	addStream("OBV", func(b ohlcv) [][]float64 { return outs(OBV(b.close, b.volume)) },
		func() func(ohlcv, int, bool) []float64 {
			s := NewOBVStream()
			return func(b ohlcv, i int, peek bool) []float64 {
				if peek {
					return one(s.Peek(b.close[i], b.volume[i]))
				}
				return one(s.Next(b.close[i], b.volume[i]))
			}
		})
	addStream("VWAP", func(b ohlcv) [][]float64 { return outs(VWAP(b.high, b.low, b.close, b.volume)) },
		func() func(ohlcv, int, bool) []float64 {
			var s VWAPStream
			return func(b ohlcv, i int, peek bool) []float64 {
				if peek {
					return one(s.Peek(b.high[i], b.low[i], b.close[i], b.volume[i]))
				}
				return one(s.Next(b.high[i], b.low[i], b.close[i], b.volume[i]))
			}
		})
	for _, a := range [][2]float64{{0.02, 0.2}, {0.1, 0.05}} {
		a := a
		addStream(fmt.Sprintf("ParabolicSAR/%g,%g", a[0], a[1]), func(b ohlcv) [][]float64 { return outs(ParabolicSAR(b.high, b.low, a[0], a[1])) },
			func() func(ohlcv, int, bool) []float64 {
				s := NewParabolicSARStream(a[0], a[1])
				return func(b ohlcv, i int, peek bool) []float64 {
					if peek {
						return one(s.Peek(b.high[i], b.low[i]))
					}
					return one(s.Next(b.high[i], b.low[i]))
				}
			})
	}
}

func tuple3(a, b, c []float64) [][]float64 { return [][]float64{a, b, c} }

// The indicators below have no TA-Lib counterpart; their expected values
// come from direct, naive evaluations of the textbook definitions written
// out here (loops over each window), not from the package's code.

func TestDonchianNaive(t *testing.T) {
	b := randomBars(21, 200)
	for _, p := range []int{1, 5, 20, 200, 201} {
		u, m, l := Donchian(b.high, b.low, p)
		for i := range b.high {
			if i < p-1 {
				if !math.IsNaN(u[i]) || !math.IsNaN(m[i]) || !math.IsNaN(l[i]) {
					t.Fatalf("p=%d [%d]: want NaN warm-up", p, i)
				}
				continue
			}
			hh, ll := math.Inf(-1), math.Inf(1)
			for j := i - p + 1; j <= i; j++ {
				hh, ll = math.Max(hh, b.high[j]), math.Min(ll, b.low[j])
			}
			if u[i] != hh || l[i] != ll || m[i] != (hh+ll)/2 {
				t.Fatalf("p=%d [%d]: got %v %v %v, want %v %v %v", p, i, u[i], m[i], l[i], hh, (hh+ll)/2, ll)
			}
		}
	}
}

func TestKeltnerFromParts(t *testing.T) {
	// Expected: middle and ATR from the TA-Lib C reference data (series
	// "random", EMA and ATR of period 20), combined as documented.
	series, cases := mustLoadTalib(t)
	s := series["random"]
	var ema, atr []*float64
	for _, c := range cases {
		if c.Series == "random" && c.period() == 20 {
			switch c.Func {
			case "EMA":
				ema = c.Outputs["outReal"]
			case "ATR":
				atr = c.Outputs["outReal"]
			}
		}
	}
	if ema == nil || atr == nil {
		t.Fatal("missing EMA/ATR 20 reference")
	}
	u, m, l := Keltner(s.High, s.Low, s.Close, 20, 2)
	for i := range s.Close {
		if atr[i] == nil {
			if !math.IsNaN(u[i]) || !math.IsNaN(m[i]) || !math.IsNaN(l[i]) {
				t.Fatalf("[%d]: want NaN before ATR's lookback", i)
			}
			continue
		}
		wm, d := *ema[i], 2**atr[i]
		if !closeEnough(m[i], wm) || !closeEnough(u[i], wm+d) || !closeEnough(l[i], wm-d) {
			t.Fatalf("[%d]: got %v %v %v, want %v %v %v", i, u[i], m[i], l[i], wm+d, wm, wm-d)
		}
	}
}

func TestVWAPNaive(t *testing.T) {
	tests := []struct {
		name                string
		h, l, c, v, wantCum []float64
	}{
		{
			name: "hand computed",
			h:    []float64{11, 12, 13}, l: []float64{9, 10, 11}, c: []float64{10, 11, 12}, v: []float64{100, 300, 0},
			// tp = 10, 11, 12: (10*100)/100, (1000+3300)/400, same (no volume)
			wantCum: []float64{10, 10.75, 10.75},
		},
		{
			name: "no volume yet",
			h:    []float64{2, 4}, l: []float64{2, 4}, c: []float64{2, 4}, v: []float64{0, 5},
			wantCum: []float64{math.NaN(), 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := VWAP(tt.h, tt.l, tt.c, tt.v)
			for i := range got {
				if !sameFloat(got[i], tt.wantCum[i]) && !closeEnough(got[i], tt.wantCum[i]) {
					t.Errorf("[%d] = %v, want %v", i, got[i], tt.wantCum[i])
				}
			}
		})
	}
	b := randomBars(5, 100)
	r := RollingVWAP(b.high, b.low, b.close, b.volume, 10)
	for i := range r {
		if i < 9 {
			if !math.IsNaN(r[i]) {
				t.Fatalf("rolling [%d] = %v, want NaN", i, r[i])
			}
			continue
		}
		var pv, vol float64
		for j := i - 9; j <= i; j++ {
			tp := (b.high[j] + b.low[j] + b.close[j]) / 3
			pv, vol = pv+tp*b.volume[j], vol+b.volume[j]
		}
		if !closeEnough(r[i], pv/vol) {
			t.Fatalf("rolling [%d] = %v, want %v", i, r[i], pv/vol)
		}
	}
}
