package profiles_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

func TestSeasonalityMonths(t *testing.T) {
	// Ten years of daily returns: each month has its own daily drift on top
	// of 0.5% noise; March > July > November are the best months and
	// September < May < January the worst, by construction.
	drift := map[time.Month]float64{
		time.March: 0.004, time.July: 0.003, time.November: 0.002,
		time.September: -0.004, time.May: -0.003, time.January: -0.002,
	}
	dates := tradingDates(day0, 2520)
	rng := newRand(5)
	r := make([]float64, len(dates))
	for i := 1; i < len(r); i++ {
		r[i] = drift[dates[i].Month] + 0.005*rng.NormFloat64()
	}
	s := profiles.Asset{Bars: ohlcv.Series{Dates: dates, Close: fromReturns(100, r)}}
	p, err := profiles.Compute(s, nil, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := profiles.Seasonality{
		BestMonths:  []string{"March", "July", "November"},
		WorstMonths: []string{"September", "May", "January"},
	}
	got := p.Seasonality
	got.DayOfWeekBias = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("months mismatch (-want +got):\n%s", diff)
	}
}

func TestSeasonalityDayOfWeek(t *testing.T) {
	// A fixed log return per weekday, no noise: the bias is that return.
	want := map[string]float64{"monday": 0.003, "tuesday": -0.001, "wednesday": 0.0005, "thursday": 0, "friday": -0.002}
	dates := tradingDates(day0, 600)
	r := make([]float64, len(dates))
	for i := range r {
		r[i] = want[[...]string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}[dates[i].Weekday()]]
	}
	p, err := profiles.Compute(profiles.Asset{Bars: ohlcv.Series{Dates: dates, Close: fromReturns(100, r)}}, nil, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, p.Seasonality.DayOfWeekBias, approx); diff != "" {
		t.Errorf("dayOfWeekBias mismatch (-want +got):\n%s", diff)
	}
}

func TestSeasonalityFewMonths(t *testing.T) {
	// 253 bars from 2 January 2015 span 13 calendar months, 12 of them with
	// a month-end return (the first month has no earlier close): 3 best, 3
	// worst, no month in both lists.
	p, err := profiles.Compute(series(fromReturns(100, gbmReturns(newRand(6), 253, 0, 0.01))), nil, profiles.Config{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range append(p.Seasonality.BestMonths, p.Seasonality.WorstMonths...) {
		if seen[m] {
			t.Errorf("month %s listed twice", m)
		}
		seen[m] = true
	}
	if len(seen) != 6 {
		t.Errorf("got %d months, want 6", len(seen))
	}
}
