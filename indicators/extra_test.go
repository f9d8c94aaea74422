package indicators

import (
	"fmt"
	"testing"
)

// scalarStream is the shape of every one-input, one-output stream.
type scalarStream interface {
	Next(x float64) float64
	Peek(x float64) float64
}

// scalarAdapter adapts a one-input indicator with a period to TA-Lib's
// outReal.
func scalarAdapter(batch func([]float64, int) []float64, stream func(int) scalarStream) talibAdapter {
	return func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
		st := stream(c.period())
		return map[string][]float64{"outReal": batch(s.Close, c.period())},
			streamOf(len(s.Close), func(i int) []float64 { return []float64{st.Next(s.Close[i])} }, "outReal")
	}
}

// scalarStreams are the one-input indicators checked stream against batch.
var scalarStreams = []struct {
	name   string
	batch  func([]float64, int) []float64
	stream func(int) scalarStream
}{
	{"WMA", WMA, func(p int) scalarStream { return NewWMAStream(p) }},
	{"DEMA", DEMA, func(p int) scalarStream { return NewDEMAStream(p) }},
	{"TEMA", TEMA, func(p int) scalarStream { return NewTEMAStream(p) }},
	{"Highest", Highest, func(p int) scalarStream { return NewHighestStream(p) }},
	{"Lowest", Lowest, func(p int) scalarStream { return NewLowestStream(p) }},
	{"Sum", Sum, func(p int) scalarStream { return NewSumStream(p) }},
	{"ROC", ROC, func(p int) scalarStream { return NewROCStream(p) }},
	{"Momentum", Momentum, func(p int) scalarStream { return NewMomentumStream(p) }},
	{"StdDev", func(in []float64, p int) []float64 { return StdDev(in, p, 1.5) },
		func(p int) scalarStream { return NewStdDevStream(p, 1.5) }},
}

// extraAdapters adds the TA-Lib adapters of the indicators beyond the
// contract to m.
func extraAdapters(m map[string]talibAdapter) {
	byTalib := map[string]string{"WMA": "WMA", "DEMA": "DEMA", "TEMA": "TEMA", "Highest": "MAX",
		"Lowest": "MIN", "Sum": "SUM", "ROC": "ROC", "Momentum": "MOM"}
	for _, s := range scalarStreams {
		if tn, ok := byTalib[s.name]; ok {
			m[tn] = scalarAdapter(s.batch, s.stream)
		}
	}
	m["STDDEV"] = func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
		k := c.Opts["optInNbDev"]
		st := NewStdDevStream(c.period(), k)
		return map[string][]float64{"outReal": StdDev(s.Close, c.period(), k)},
			streamOf(len(s.Close), func(i int) []float64 { return []float64{st.Next(s.Close[i])} }, "outReal")
	}
}

// extraStreams registers the stream-versus-batch cases of the indicators
// beyond the contract.
func extraStreams(addStream addStreamFunc) {
	for _, sc := range scalarStreams {
		for _, p := range []int{1, 2, 3, 7, 14, 30} {
			sc, p := sc, p
			addStream(fmt.Sprintf("%s/%d", sc.name, p), func(b ohlcv) [][]float64 { return outs(sc.batch(b.close, p)) },
				func() func(ohlcv, int, bool) []float64 {
					s := sc.stream(p)
					return func(b ohlcv, i int, peek bool) []float64 {
						if peek {
							return one(s.Peek(b.close[i]))
						}
						return one(s.Next(b.close[i]))
					}
				})
		}
	}
}

// TestIntoInPlace checks the Into variants documented as accepting dst == in.
func TestIntoInPlace(t *testing.T) {
	b := randomBars(3, 300)
	for _, tt := range []struct {
		name string
		into func(dst, in []float64)
		want []float64
	}{
		{"EMA", func(d, in []float64) { EMAInto(d, in, 10) }, EMA(b.close, 10)},
		{"RSI", func(d, in []float64) { RSIInto(d, in, 14) }, RSI(b.close, 14)},
		{"DEMA", func(d, in []float64) { DEMAInto(d, in, 10) }, DEMA(b.close, 10)},
		{"TEMA", func(d, in []float64) { TEMAInto(d, in, 10) }, TEMA(b.close, 10)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := append([]float64(nil), b.close...)
			tt.into(x, x)
			for i := range x {
				if !sameFloat(x[i], tt.want[i]) {
					t.Fatalf("[%d] in place %v, want %v", i, x[i], tt.want[i])
				}
			}
		})
	}
}
