package indicators

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// bar builds a daily bar; prices are chosen so each field is traceable.
func bar(date string, o, h, l, c, v float64) Bar {
	return Bar{Date: day(date), Open: o, High: h, Low: l, Close: c, Volume: v}
}

// daily spans the 2020/2021 turn of the year, with the 1 January holiday
// missing: 2020-12-28 (Mon) to 2021-01-03 (Sun) is ISO week 2020-W53;
// 2021-01-04 starts 2021-W01. Expected bars were worked out by hand.
var daily = []Bar{
	bar("2020-12-23", 10, 12, 9, 11, 100),  // Wed, 2020-W52
	bar("2020-12-24", 11, 13, 10, 12, 200), // Thu, 2020-W52 (25th a holiday)
	bar("2020-12-28", 12, 15, 11, 14, 300), // Mon, 2020-W53
	bar("2020-12-29", 14, 14, 8, 9, 400),   // Tue
	bar("2020-12-30", 9, 10, 8.5, 10, 500), // Wed
	bar("2020-12-31", 10, 11, 9, 10.5, 600),
	bar("2021-01-04", 10.5, 16, 10, 15, 700), // Mon, 2021-W01
	bar("2021-01-08", 15, 17, 14, 16, 800),   // Fri
}

func TestWeekly(t *testing.T) {
	want := []Bar{
		bar("2020-12-24", 10, 13, 9, 12, 300),
		bar("2020-12-31", 12, 15, 8, 10.5, 1800),
		bar("2021-01-08", 10.5, 17, 10, 16, 1500),
	}
	if diff := cmp.Diff(want, Weekly(daily)); diff != "" {
		t.Errorf("Weekly() mismatch (-want +got):\n%s", diff)
	}
}

func TestMonthly(t *testing.T) {
	want := []Bar{
		bar("2020-12-31", 10, 15, 8, 10.5, 2100),
		bar("2021-01-08", 10.5, 17, 10, 16, 1500),
	}
	if diff := cmp.Diff(want, Monthly(daily)); diff != "" {
		t.Errorf("Monthly() mismatch (-want +got):\n%s", diff)
	}
}

func TestResampleEdges(t *testing.T) {
	tests := []struct {
		name string
		in   []Bar
		want []Bar
	}{
		{"empty", nil, nil},
		{"one bar", daily[:1], daily[:1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Weekly(tt.in)); diff != "" {
				t.Errorf("Weekly() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, Monthly(tt.in)); diff != "" {
				t.Errorf("Monthly() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	in := append([]Bar(nil), daily...)
	Weekly(in)
	if diff := cmp.Diff(daily, in); diff != "" {
		t.Errorf("Weekly modified its input:\n%s", diff)
	}
	unsorted := []Bar{daily[1], daily[0]}
	for name, f := range map[string]func([]Bar) []Bar{"Weekly": Weekly, "Monthly": Monthly} {
		if msg := panics(func() { f(unsorted) }); !strings.HasPrefix(msg, "indicators: "+name) {
			t.Errorf("%s(unsorted) panic %q", name, msg)
		}
		if msg := panics(func() { f([]Bar{daily[0], daily[0]}) }); msg == "" {
			t.Errorf("%s(duplicate date) did not panic", name)
		}
	}
}

func TestColumns(t *testing.T) {
	o, h, l, c, v := Columns(daily[:2])
	got := [][]float64{o, h, l, c, v}
	want := [][]float64{{10, 11}, {12, 13}, {9, 10}, {11, 12}, {100, 200}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Columns() mismatch (-want +got):\n%s", diff)
	}
}
