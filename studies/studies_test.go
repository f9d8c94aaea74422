package studies

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		kind, params string
		want         Spec
		wantParam    string // the ParamError's Param, "" for success
	}{
		{"SMA", "", Spec{Kind: SMA, Period: 20}, ""},
		{"EMA", "{}", Spec{Kind: EMA, Period: 20}, ""},
		{"RSI", `{"period":2}`, Spec{Kind: RSI, Period: 2}, ""},
		{"ATR", `{"period":1000}`, Spec{Kind: ATR, Period: 1000}, ""},
		{"SMA", `{"period":50.0}`, Spec{Kind: SMA, Period: 50}, ""},
		{"MACD", `{"fastPeriod":5,"signalPeriod":3}`, Spec{Kind: MACD, Fast: 5, Slow: 26, Signal: 3}, ""},
		{"BB", `{"stdDev":2.5}`, Spec{Kind: BB, Period: 20, K: 2.5}, ""},
		{"sma", "", Spec{}, "indicator"},
		{"", "", Spec{}, "indicator"},
		{"SMA", "null", Spec{}, "params"},
		{"SMA", "[]", Spec{}, "params"},
		{"SMA", `{"period":20`, Spec{}, "params"},
		{"SMA", `{"period":20,"stdDev":2}`, Spec{}, "params"},
		{"SMA", `{"period":0}`, Spec{}, "params"},
		{"SMA", `{"period":-5}`, Spec{}, "params"},
		{"SMA", `{"period":1001}`, Spec{}, "params"},
		{"SMA", `{"period":1e300}`, Spec{}, "params"},
		{"SMA", `{"period":true}`, Spec{}, "params"},
		{"RSI", `{"period":1}`, Spec{}, "params"},
		{"BB", `{"stdDev":0}`, Spec{}, "params"},
		{"BB", `{"stdDev":11}`, Spec{}, "params"},
		{"MACD", `{"slowPeriod":0}`, Spec{}, "params"},
		// fastPeriod must stay below slowPeriod: at, just under, over.
		{"MACD", `{"fastPeriod":25}`, Spec{Kind: MACD, Fast: 25, Slow: 26, Signal: 9}, ""},
		{"MACD", `{"fastPeriod":26}`, Spec{}, "params"},
		{"MACD", `{"fastPeriod":30,"slowPeriod":10}`, Spec{}, "params"},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.kind, tt.params)
		var pe *tradekit.ParamError
		switch {
		case tt.wantParam == "" && err != nil:
			t.Errorf("ParseSpec(%q, %q) error %v", tt.kind, tt.params, err)
		case tt.wantParam != "" && (!errors.As(err, &pe) || pe.Param != tt.wantParam || !errors.Is(err, tradekit.ErrInvalid)):
			t.Errorf("ParseSpec(%q, %q) error %v, want a ParamError naming %s", tt.kind, tt.params, err, tt.wantParam)
		case tt.wantParam == "" && got != tt.want:
			t.Errorf("ParseSpec(%q, %q) = %+v, want %+v", tt.kind, tt.params, got, tt.want)
		}
	}
}

func TestParseName(t *testing.T) {
	for in, want := range map[string]string{"RSI": "RSI_14", "sma_50": "SMA_50", " MACD ": "MACD", "BB_10": "BB_10", "ATR_2": "ATR_2"} {
		s, err := ParseName("indicators", in)
		if err != nil || s.Name() != want {
			t.Errorf("ParseName(%q) = %v, %v; want %s", in, s.Name(), err, want)
		}
	}
	for _, in := range []string{"", "KAMA", "SMA_", "SMA_0", "SMA_1001", "RSI_1", "MACD_12", "SMA_x"} {
		_, err := ParseName("indicators", in)
		var pe *tradekit.ParamError
		if !errors.As(err, &pe) || pe.Param != "indicators" || !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("ParseName(%q) error = %v, want a ParamError naming indicators", in, err)
		}
	}
}

func TestOutputWindow(t *testing.T) {
	d := calendar.NewDate
	o := Output{
		Dates: []calendar.Date{d(2024, 1, 2), d(2024, 1, 3), d(2024, 1, 5), d(2024, 1, 8)},
		Value: []float64{1, 2, 3, 4},
	}
	tests := []struct {
		from, to calendar.Date
		want     []float64
	}{
		{calendar.Date{}, calendar.Date{}, []float64{1, 2, 3, 4}},
		{d(2024, 1, 3), d(2024, 1, 5), []float64{2, 3}},
		{d(2024, 1, 4), calendar.Date{}, []float64{3, 4}},
		{calendar.Date{}, d(2024, 1, 4), []float64{1, 2}},
		{d(2024, 1, 6), d(2024, 1, 7), []float64{}},
		{d(2025, 1, 1), calendar.Date{}, []float64{}},
	}
	for _, tt := range tests {
		w := o.Window(tt.from, tt.to)
		if diff := cmp.Diff(tt.want, w.Value); diff != "" || len(w.Dates) != len(w.Value) || w.Signal != nil {
			t.Errorf("Window(%v, %v) (-want +got):\n%s", tt.from, tt.to, diff)
		}
	}
}

func TestComputeUndefinedIsNaN(t *testing.T) {
	b := ohlcv.Series{Dates: make([]calendar.Date, 5), Open: []float64{1, 2, 3, 4, 5}, High: []float64{1, 2, 3, 4, 5},
		Low: []float64{1, 2, 3, 4, 5}, Close: []float64{1, 2, 3, 4, 5}, Volume: make([]float64, 5)}
	o := Compute(Spec{Kind: SMA, Period: 10}, b)
	for i, v := range o.Value {
		if !math.IsNaN(v) {
			t.Errorf("SMA(10) of 5 bars at %d = %v, want NaN", i, v)
		}
	}
	l := latest(Spec{Kind: MACD}, Output{})
	if !math.IsNaN(l.Value) || !math.IsNaN(l.Signal) || l.Date.IsValid() {
		t.Errorf("latest of nothing = %+v", l)
	}
}
