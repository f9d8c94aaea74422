package ohlcv_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

// bars builds a series from rows of (date, open, high, low, close, volume);
// prices are chosen so each field is traceable.
func bars(rows ...[6]any) ohlcv.Series {
	var s ohlcv.Series
	for _, r := range rows {
		d, err := calendar.ParseDate(r[0].(string))
		if err != nil {
			panic(err)
		}
		s.Dates = append(s.Dates, d)
		s.Open = append(s.Open, r[1].(float64))
		s.High = append(s.High, r[2].(float64))
		s.Low = append(s.Low, r[3].(float64))
		s.Close = append(s.Close, r[4].(float64))
		s.Volume = append(s.Volume, r[5].(float64))
	}
	return s
}

// daily spans the 2020/2021 turn of the year, with the 1 January holiday
// missing: 2020-12-28 (Mon) to 2021-01-03 (Sun) is ISO week 2020-W53;
// 2021-01-04 starts 2021-W01. Expected bars were worked out by hand.
var daily = bars(
	[6]any{"2020-12-23", 10.0, 12.0, 9.0, 11.0, 100.0},  // Wed, 2020-W52
	[6]any{"2020-12-24", 11.0, 13.0, 10.0, 12.0, 200.0}, // Thu, 2020-W52 (25th a holiday)
	[6]any{"2020-12-28", 12.0, 15.0, 11.0, 14.0, 300.0}, // Mon, 2020-W53
	[6]any{"2020-12-29", 14.0, 14.0, 8.0, 9.0, 400.0},   // Tue
	[6]any{"2020-12-30", 9.0, 10.0, 8.5, 10.0, 500.0},   // Wed
	[6]any{"2020-12-31", 10.0, 11.0, 9.0, 10.5, 600.0},
	[6]any{"2021-01-04", 10.5, 16.0, 10.0, 15.0, 700.0}, // Mon, 2021-W01
	[6]any{"2021-01-08", 15.0, 17.0, 14.0, 16.0, 800.0}, // Fri
)

func TestResample(t *testing.T) {
	tests := []struct {
		tf   ohlcv.Timeframe
		in   ohlcv.Series
		want ohlcv.Series
	}{
		{ohlcv.Daily, daily, daily},
		{ohlcv.Weekly, daily, bars(
			[6]any{"2020-12-24", 10.0, 13.0, 9.0, 12.0, 300.0},
			[6]any{"2020-12-31", 12.0, 15.0, 8.0, 10.5, 1800.0},
			[6]any{"2021-01-08", 10.5, 17.0, 10.0, 16.0, 1500.0},
		)},
		{ohlcv.Monthly, daily, bars(
			[6]any{"2020-12-31", 10.0, 15.0, 8.0, 10.5, 2100.0},
			[6]any{"2021-01-08", 10.5, 17.0, 10.0, 16.0, 1500.0},
		)},
		{ohlcv.Weekly, ohlcv.Series{}, ohlcv.Series{}},
		{ohlcv.Monthly, daily.Slice(0, 1), daily.Slice(0, 1)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.tf, tt.in.Len()), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.in.Resample(tt.tf)); diff != "" {
				t.Errorf("Resample(%s) mismatch (-want +got):\n%s", tt.tf, diff)
			}
		})
	}

	before := bars()
	before.Dates = append(before.Dates, daily.Dates...)
	before.Close = append(before.Close, daily.Close...)
	daily.Resample(ohlcv.Weekly)
	if diff := cmp.Diff(before.Close, daily.Close); diff != "" {
		t.Errorf("Resample modified its input:\n%s", diff)
	}
}

// TestResampleWeeksAreISOWeeks checks the week numbering against
// time.Time.ISOWeek on every day of 1960 to 2040, one bar a day.
func TestResampleWeeksAreISOWeeks(t *testing.T) {
	var s ohlcv.Series
	for d := calendar.NewDate(1960, 1, 1); d.Year < 2040; d = d.AddDays(1) {
		s.Dates = append(s.Dates, d)
		s.Open, s.High, s.Low, s.Close, s.Volume = append(s.Open, 1), append(s.High, 1), append(s.Low, 1), append(s.Close, 1), append(s.Volume, 1)
	}
	w := s.Resample(ohlcv.Weekly)
	i := 0
	for j, end := range w.Dates {
		y, wk := end.Time(time.UTC).ISOWeek()
		n := 0
		for ; i < len(s.Dates); i++ {
			if yy, ww := s.Dates[i].Time(time.UTC).ISOWeek(); yy != y || ww != wk {
				break
			}
			n++
		}
		if float64(n) != w.Volume[j] {
			t.Fatalf("week ending %s holds %v days, want %d (ISO week %d-W%02d)", end, w.Volume[j], n, y, wk)
		}
	}
	if i != len(s.Dates) {
		t.Fatalf("weeks hold %d of %d days", i, len(s.Dates))
	}
}

func TestResamplePanics(t *testing.T) {
	unsorted := ohlcv.Series{Dates: []calendar.Date{daily.Dates[1], daily.Dates[0]},
		Open: daily.Open[:2], High: daily.High[:2], Low: daily.Low[:2], Close: daily.Close[:2], Volume: daily.Volume[:2]}
	for _, tf := range []ohlcv.Timeframe{ohlcv.Weekly, ohlcv.Monthly, "1y"} {
		in := unsorted
		if tf == "1y" {
			in = daily
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Resample(%s) did not panic", tf)
				}
			}()
			in.Resample(tf)
		}()
	}
}

func TestParseTimeframe(t *testing.T) {
	for _, tf := range ohlcv.Timeframes() {
		if got, err := ohlcv.ParseTimeframe(tf.String()); err != nil || got != tf {
			t.Errorf("ParseTimeframe(%q) = %q, %v", tf, got, err)
		}
	}
	_, err := ohlcv.ParseTimeframe("1D")
	var pe *tradekit.ParamError
	if !errors.As(err, &pe) || pe.Param != "timeframe" || !errors.Is(err, tradekit.ErrInvalid) {
		t.Fatalf("ParseTimeframe(1D) error %v, want a ParamError for timeframe", err)
	}
	if want := `unknown timeframe "1D"; want 1d, 1w, 1M`; pe.Msg != want {
		t.Errorf("message %q, want %q", pe.Msg, want)
	}
}

func TestCheck(t *testing.T) {
	if err := daily.Check(); err != nil {
		t.Fatal(err)
	}
	if err := (ohlcv.Series{Close: []float64{1, 2}}).Check(); err != nil {
		t.Errorf("closes alone: %v", err)
	}
	bad := map[string]ohlcv.Series{
		"short column":  {Dates: daily.Dates, Close: daily.Close[:3]},
		"short dates":   {Dates: daily.Dates[:3], Close: daily.Close},
		"repeated date": {Dates: []calendar.Date{daily.Dates[0], daily.Dates[0]}, Close: []float64{1, 2}},
	}
	for name, s := range bad {
		if err := s.Check(); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("%s: Check() = %v, want ErrInvalid", name, err)
		}
	}
}

func TestSliceAndBetween(t *testing.T) {
	s := ohlcv.Series{Dates: daily.Dates, Close: daily.Close}
	got := s.Between(calendar.NewDate(2020, 12, 25), calendar.NewDate(2020, 12, 30))
	want := ohlcv.Series{Dates: daily.Dates[2:5], Close: daily.Close[2:5]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Between mismatch (-want +got):\n%s", diff)
	}
	if got.Open != nil {
		t.Error("a nil column became non-nil")
	}
	if got := s.Between(calendar.Date{}, calendar.Date{}); got.Len() != s.Len() {
		t.Errorf("open bounds give %d bars, want %d", got.Len(), s.Len())
	}
	if got := s.Between(calendar.NewDate(2030, 1, 1), calendar.Date{}); got.Len() != 0 {
		t.Errorf("a range after the last bar gives %d bars", got.Len())
	}
	// Appending to a slice must not write into the original.
	head := s.Slice(0, 2)
	_ = append(head.Close, 99)
	if s.Close[2] == 99 {
		t.Error("Slice shares capacity past its end")
	}
}

func ExampleSeries_Resample() {
	d := func(s string) calendar.Date { d, _ := calendar.ParseDate(s); return d }
	daily := ohlcv.Series{
		Dates:  []calendar.Date{d("2024-01-02"), d("2024-01-05"), d("2024-01-08")},
		Open:   []float64{10, 10.5, 11.5},
		High:   []float64{11, 12, 13},
		Low:    []float64{9, 10, 11},
		Close:  []float64{10.5, 11.5, 12},
		Volume: []float64{100, 200, 300},
	}
	w := daily.Resample(ohlcv.Weekly)
	for i := range w.Len() {
		fmt.Println(w.Dates[i], w.Open[i], w.High[i], w.Low[i], w.Close[i], w.Volume[i])
	}
	// Output:
	// 2024-01-05 10 12 9 11.5 300
	// 2024-01-08 11.5 13 11 12 300
}
