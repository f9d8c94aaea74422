package server

import (
	"math"
	"testing"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/studies"
)

// TestSeriesDocumentWindow checks every window of a series document against the
// document of the windowed output, on a series with undefined values at
// the start and in the middle.
func TestSeriesDocumentWindow(t *testing.T) {
	t.Parallel()
	n := 12
	o := studies.Output{Dates: make([]calendar.Date, n), Value: make([]float64, n), Signal: make([]float64, n), Histogram: make([]float64, n)}
	for i := range o.Dates {
		o.Dates[i] = calendar.NewDate(2024, 3, 1).AddDays(2 * i)
		o.Value[i], o.Signal[i], o.Histogram[i] = float64(i)+0.5, -float64(i), 1e-9*float64(i)
	}
	o.Value[0], o.Value[1], o.Value[6] = math.NaN(), math.NaN(), math.Inf(1)
	e := newSeriesDocument(o)
	bound := func(k int) calendar.Date { // -1 is open; odd days fall between dates
		if k < 0 {
			return calendar.Date{}
		}
		return calendar.NewDate(2024, 3, 1).AddDays(k)
	}
	for f := -1; f < 2*n+1; f++ {
		for to := -1; to < 2*n+1; to++ {
			got := string(e.appendWindow(nil, bound(f), bound(to)))
			want := string(newSeriesDocument(o.Window(bound(f), bound(to))).appendWindow(nil, calendar.Date{}, calendar.Date{}))
			if got != want {
				t.Fatalf("window %v..%v:\n got %s\nwant %s", bound(f), bound(to), got, want)
			}
		}
	}
	if got := string(e.appendWindow(nil, calendar.Date{}, calendar.NewDate(2024, 3, 3))); got != "[]" {
		t.Errorf("window over undefined values only = %s, want []", got)
	}
	if got := string(e.appendWindow(nil, calendar.NewDate(2024, 3, 5), calendar.NewDate(2024, 3, 5))); got != `[{"date":"2024-03-05","value":2.5,"signal":-2,"histogram":2e-9}]` {
		t.Errorf("one point = %s", got)
	}
}

// TestFractionJSON checks that a figure JSON cannot hold is written 0,
// never NaN or Inf, which would make the whole answer invalid JSON.
func TestFractionJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]string{0.125: "0.125", -0.5: "-0.5", math.NaN(): "0", math.Inf(1): "0", math.Inf(-1): "0"} {
		if b, _ := fraction(in).MarshalJSON(); string(b) != want {
			t.Errorf("fraction(%v) = %s, want %s", in, b, want)
		}
	}
}
