package indicators

import (
	"math"
	"testing"

	talib "github.com/markcheno/go-talib"
)

// TestMACDGoTalibDiffers shows on the 2,000-bar series of the TA-Lib data
// that github.com/markcheno/go-talib's Macd departs from TA-Lib C (its fast
// EMA starts at index fast-1 instead of at the slow EMA's start, and its
// outputs begin earlier), while MACD matches TA-Lib C at every bar.
func TestMACDGoTalibDiffers(t *testing.T) {
	series, cases := mustLoadTalib(t)
	var ref *talibCase
	for i := range cases {
		if cases[i].Func == "MACD" && cases[i].Series == "macd2000" {
			ref = &cases[i]
		}
	}
	if ref == nil {
		t.Fatal("no macd2000 case in testdata/talib/cases.json")
	}
	in := series["macd2000"].Close
	if len(in) != 2000 {
		t.Fatalf("series has %d bars, want 2000", len(in))
	}
	m, s, h := MACD(in, 12, 26, 9)
	gm, gs, gh := talib.Macd(in, 12, 26, 9)
	ours, theirs := 0, 0
	for _, o := range []struct {
		name        string
		ours, gotal []float64
	}{
		{"outMACD", m, gm}, {"outMACDSignal", s, gs}, {"outMACDHist", h, gh},
	} {
		want := ref.Outputs[o.name]
		for i, w := range want {
			if !sameAsTalib(o.ours[i], w) {
				ours++
			}
			if !sameAsTalib(o.gotal[i], w) {
				theirs++
			}
		}
	}
	differing, valued := 0, 0 // bars where any of go-talib's outputs departs; of them, where TA-Lib has a value
	for i := range in {
		for _, p := range []struct {
			name string
			v    []float64
		}{{"outMACD", gm}, {"outMACDSignal", gs}, {"outMACDHist", gh}} {
			if w := ref.Outputs[p.name][i]; !sameAsTalib(p.v[i], w) {
				differing++
				if w != nil {
					valued++
				}
				break
			}
		}
	}
	if ours != 0 {
		t.Errorf("MACD differs from TA-Lib C at %d values", ours)
	}
	if theirs == 0 {
		t.Errorf("go-talib Macd matches TA-Lib C everywhere; expected it to differ")
	}
	t.Logf("2000 bars: go-talib Macd differs from TA-Lib C at %d bars (%d values; %d of the bars where TA-Lib gives a value); tradekit at 0",
		differing, theirs, valued)
}

// sameAsTalib treats TA-Lib's "no value" as matching NaN only.
func sameAsTalib(got float64, want *float64) bool {
	if want == nil {
		return math.IsNaN(got)
	}
	return closeEnough(got, *want)
}
