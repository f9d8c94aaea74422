package indicators

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// The reference data under testdata/talib comes from TA-Lib's C library
// (version 0.6.0, as compiled by the npm package "talib"), written by
// testdata/talib/gen.js. Nothing in it is computed by this package.

type talibSeries struct {
	Open, High, Low, Close, Volume []float64
}

type talibCase struct {
	Func     string                `json:"func"`
	Series   string                `json:"series"`
	Opts     map[string]float64    `json:"opts"`
	BegIndex int                   `json:"begIndex"`
	NbElem   int                   `json:"nbElement"`
	Outputs  map[string][]*float64 `json:"outputs"`
}

func (c talibCase) String() string {
	keys := make([]string, 0, len(c.Opts))
	for k := range c.Opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := c.Func + "/" + c.Series
	for _, k := range keys {
		s += fmt.Sprintf("/%s=%g", k, c.Opts[k])
	}
	return s
}

func (c talibCase) period() int { return int(c.Opts["optInTimePeriod"]) }

func mustLoadTalib(tb testing.TB) (map[string]talibSeries, []talibCase) {
	tb.Helper()
	var series map[string]talibSeries
	var cases []talibCase
	for name, v := range map[string]any{"series.json": &series, "cases.json": &cases} {
		b, err := os.ReadFile(filepath.Join("testdata", "talib", name))
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	return series, cases
}

// talibAdapter runs our batch and stream implementations of one TA-Lib
// function, returning outputs under TA-Lib's output names.
type talibAdapter func(s talibSeries, c talibCase) (batch, stream map[string][]float64)

// streamOf runs next over every index and collects its outputs.
func streamOf(n int, next func(i int) []float64, names ...string) map[string][]float64 {
	out := make(map[string][]float64, len(names))
	for _, name := range names {
		out[name] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		v := next(i)
		for j, name := range names {
			out[name][i] = v[j]
		}
	}
	return out
}

// allTalibAdapters maps TA-Lib function names to our implementations.
func allTalibAdapters() map[string]talibAdapter {
	m := contractAdapters()
	extraAdapters(m)
	otherAdapters(m)
	return m
}

func contractAdapters() map[string]talibAdapter {
	return map[string]talibAdapter{
		"SMA": func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
			st := NewSMAStream(c.period())
			return map[string][]float64{"outReal": SMA(s.Close, c.period())},
				streamOf(len(s.Close), func(i int) []float64 { return []float64{st.Next(s.Close[i])} }, "outReal")
		},
		"EMA": func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
			st := NewEMAStream(c.period())
			return map[string][]float64{"outReal": EMA(s.Close, c.period())},
				streamOf(len(s.Close), func(i int) []float64 { return []float64{st.Next(s.Close[i])} }, "outReal")
		},
		"RSI": func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
			st := NewRSIStream(c.period())
			return map[string][]float64{"outReal": RSI(s.Close, c.period())},
				streamOf(len(s.Close), func(i int) []float64 { return []float64{st.Next(s.Close[i])} }, "outReal")
		},
		"ATR": func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
			st := NewATRStream(c.period())
			return map[string][]float64{"outReal": ATR(s.High, s.Low, s.Close, c.period())},
				streamOf(len(s.Close), func(i int) []float64 { return []float64{st.Next(s.High[i], s.Low[i], s.Close[i])} }, "outReal")
		},
		"MACD": func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
			f, sl, g := int(c.Opts["optInFastPeriod"]), int(c.Opts["optInSlowPeriod"]), int(c.Opts["optInSignalPeriod"])
			m, sg, h := MACD(s.Close, f, sl, g)
			st := NewMACDStream(f, sl, g)
			return map[string][]float64{"outMACD": m, "outMACDSignal": sg, "outMACDHist": h},
				streamOf(len(s.Close), func(i int) []float64 {
					a, b, c := st.Next(s.Close[i])
					return []float64{a, b, c}
				}, "outMACD", "outMACDSignal", "outMACDHist")
		},
		"BBANDS": func(s talibSeries, c talibCase) (map[string][]float64, map[string][]float64) {
			k := c.Opts["optInNbDevUp"]
			u, m, l := BollingerBands(s.Close, c.period(), k)
			st := NewBollingerStream(c.period(), k)
			return map[string][]float64{"outRealUpperBand": u, "outRealMiddleBand": m, "outRealLowerBand": l},
				streamOf(len(s.Close), func(i int) []float64 {
					a, b, c := st.Next(s.Close[i])
					return []float64{a, b, c}
				}, "outRealUpperBand", "outRealMiddleBand", "outRealLowerBand")
		},
	}
}

// closeEnough reports whether got matches TA-Lib's want within 1e-9
// relative, with an absolute floor of 1e-12 for values next to zero.
func closeEnough(got, want float64) bool {
	if got == want {
		return true
	}
	d := math.Abs(got - want)
	return d <= 1e-9*math.Max(math.Abs(got), math.Abs(want)) || d <= 1e-12
}

func compareTalib(t *testing.T, what string, want []*float64, got []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	bad := 0
	for i, w := range want {
		g := got[i]
		switch {
		case w == nil && !math.IsNaN(g):
			t.Errorf("%s[%d] = %v, TA-Lib gives no value (want NaN)", what, i, g)
			bad++
		case w != nil && !closeEnough(g, *w):
			t.Errorf("%s[%d] = %.17g, TA-Lib %.17g", what, i, g, *w)
			bad++
		}
		if bad >= 5 {
			t.Fatalf("%s: stopping after %d mismatches", what, bad)
		}
	}
}

func TestTALibParity(t *testing.T) {
	series, cases := mustLoadTalib(t)
	talibAdapters := allTalibAdapters()
	tested := map[string]int{}
	for _, c := range cases {
		ad, ok := talibAdapters[c.Func]
		if !ok {
			continue
		}
		tested[c.Func]++
		t.Run(c.String(), func(t *testing.T) {
			s, ok := series[c.Series]
			if !ok {
				t.Fatalf("unknown series %q", c.Series)
			}
			batch, stream := ad(s, c)
			if batch == nil {
				t.Skip("options not offered by tradekit (see the adapter)")
			}
			for name, want := range c.Outputs {
				got, ok := batch[name]
				if !ok {
					t.Fatalf("adapter gives no output %q", name)
				}
				compareTalib(t, "batch "+name, want, got)
				compareTalib(t, "stream "+name, want, stream[name])
			}
		})
	}
	for name := range talibAdapters {
		if tested[name] == 0 {
			t.Errorf("no TA-Lib cases for %s", name)
		}
	}
}
