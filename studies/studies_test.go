package studies

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata/calendar"
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
		if _, err := ParseName("indicators", in); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("ParseName(%q) error = %v, want ErrInvalid", in, err)
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
	b := Bars{Dates: make([]calendar.Date, 5), Open: []float64{1, 2, 3, 4, 5}, High: []float64{1, 2, 3, 4, 5},
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

// TestEncodedWindow checks every window of a cached encoding against the
// encoding of the windowed output, on a series with undefined values at
// the start and in the middle.
func TestEncodedWindow(t *testing.T) {
	n := 12
	o := Output{Dates: make([]calendar.Date, n), Value: make([]float64, n), Signal: make([]float64, n), Histogram: make([]float64, n)}
	for i := range o.Dates {
		o.Dates[i] = calendar.NewDate(2024, 3, 1).AddDays(2 * i)
		o.Value[i], o.Signal[i], o.Histogram[i] = float64(i)+0.5, -float64(i), 1e-9*float64(i)
	}
	o.Value[0], o.Value[1], o.Value[6] = math.NaN(), math.NaN(), math.Inf(1)
	e := Encode(o)
	bound := func(k int) calendar.Date { // -1 is open; odd days fall between dates
		if k < 0 {
			return calendar.Date{}
		}
		return calendar.NewDate(2024, 3, 1).AddDays(k)
	}
	for f := -1; f < 2*n+1; f++ {
		for to := -1; to < 2*n+1; to++ {
			got := string(e.AppendWindow(nil, bound(f), bound(to)))
			want := string(Encode(o.Window(bound(f), bound(to))).AppendWindow(nil, calendar.Date{}, calendar.Date{}))
			if got != want {
				t.Fatalf("window %v..%v:\n got %s\nwant %s", bound(f), bound(to), got, want)
			}
		}
	}
	if got := string(e.AppendWindow(nil, calendar.Date{}, calendar.NewDate(2024, 3, 3))); got != "[]" {
		t.Errorf("window over undefined values only = %s, want []", got)
	}
	if got := string(e.AppendWindow(nil, calendar.NewDate(2024, 3, 5), calendar.NewDate(2024, 3, 5))); got != `[{"date":"2024-03-05","value":2.5,"signal":-2,"histogram":2e-9}]` {
		t.Errorf("one point = %s", got)
	}
}
