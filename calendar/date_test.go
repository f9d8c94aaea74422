package calendar_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

func TestDateAgainstTime(t *testing.T) {
	// Every day from 1899 to 2102 must agree with package time.
	start := time.Date(1899, 1, 1, 0, 0, 0, 0, time.UTC)
	d := calendar.DateOf(start)
	for tm := start; tm.Year() <= 2102; tm = tm.AddDate(0, 0, 1) {
		want := calendar.DateOf(tm)
		if d != want {
			t.Fatalf("AddDays walk: got %v, want %v", d, want)
		}
		if d.Weekday() != tm.Weekday() {
			t.Fatalf("%v.Weekday() = %v, want %v", d, d.Weekday(), tm.Weekday())
		}
		if d.YearDay() != tm.YearDay() {
			t.Fatalf("%v.YearDay() = %v, want %v", d, d.YearDay(), tm.YearDay())
		}
		d = d.AddDays(1)
	}
}

func TestNewDateNormalises(t *testing.T) {
	tests := []struct {
		y    int
		m    time.Month
		d    int
		want string
	}{
		{2024, time.February, 30, "2024-03-01"},
		{2023, 13, 1, "2024-01-01"},
		{2023, 0, 1, "2022-12-01"},
		{2023, time.March, 0, "2023-02-28"},
		{2024, time.December, 32, "2025-01-01"},
	}
	for _, tt := range tests {
		if got := calendar.NewDate(tt.y, tt.m, tt.d).String(); got != tt.want {
			t.Errorf("NewDate(%d, %d, %d) = %s, want %s", tt.y, tt.m, tt.d, got, tt.want)
		}
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in      string
		want    calendar.Date
		wantErr error
	}{
		{"2024-07-03", calendar.Date{Year: 2024, Month: time.July, Day: 3}, nil},
		{"2024-02-30", calendar.Date{}, tradekit.ErrInvalid},
		{"2024-7-3", calendar.Date{}, tradekit.ErrInvalid},
		{"", calendar.Date{}, tradekit.ErrInvalid},
	}
	for _, tt := range tests {
		got, err := calendar.ParseDate(tt.in)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("ParseDate(%q) = %v, %v; want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestDateJSON(t *testing.T) {
	h := calendar.Holiday{Date: calendar.Date{Year: 2024, Month: time.December, Day: 24}, Name: "Christmas Eve", Type: calendar.EarlyClose, Close: "13:00"}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"date":"2024-12-24","name":"Christmas Eve","type":"early_close","closeTime":"13:00"}`
	if string(b) != want {
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
	var back calendar.Holiday
	if err := json.Unmarshal(b, &back); err != nil || back != h {
		t.Errorf("round trip = %+v, %v; want %+v", back, err, h)
	}
	if err := json.Unmarshal([]byte(`{"date":"24/12/2024"}`), &back); !errors.Is(err, tradekit.ErrInvalid) {
		t.Errorf("bad date error = %v, want ErrInvalid", err)
	}
}

func TestDateCompare(t *testing.T) {
	a := calendar.Date{Year: 2024, Month: time.March, Day: 1}
	b := calendar.Date{Year: 2024, Month: time.February, Day: 29}
	if !b.Before(a) || !a.After(b) || a.Compare(a) != 0 || a.Sub(b) != 1 {
		t.Errorf("Compare/Before/After/Sub disagree for %v and %v", a, b)
	}
	if (calendar.Date{}).IsValid() {
		t.Error("zero Date is valid")
	}
}
