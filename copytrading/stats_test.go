package copytrading_test

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/marketdata/calendar"
)

// curve builds days from "YYYY-MM-DD equity [flow]" triples.
func curve(t *testing.T, rows ...[3]string) []copytrading.Day {
	t.Helper()
	out := make([]copytrading.Day, len(rows))
	for i, r := range rows {
		d, err := calendar.ParseDate(r[0])
		if err != nil {
			t.Fatal(err)
		}
		out[i] = copytrading.Day{Date: d, Equity: decimal.RequireFromString(r[1])}
		if r[2] != "" {
			out[i].Flow = decimal.RequireFromString(r[2])
		}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestCompute(t *testing.T) {
	// +10 %, −10 %, +10 %: total 1.1 × 0.9 × 1.1 − 1 = 0.089; the fall
	// from 1.1 to 0.99 is −10 %; mean/sd = (1/30)/(√(0.04/3)) = 1/(2√3),
	// so the Sharpe ratio is √252/(2√3) = √21.
	s := copytrading.Compute(curve(t,
		[3]string{"2026-01-30", "100", ""},
		[3]string{"2026-02-02", "110", ""},
		[3]string{"2026-02-27", "99", ""},
		[3]string{"2026-03-02", "108.9", ""},
	))
	if !near(s.TotalReturn, 0.089) || !near(s.MaxDrawdown, -0.1) || !near(s.SharpeRatio, math.Sqrt(21)) || s.Days != 3 {
		t.Errorf("%+v", s)
	}
	if len(s.MonthlyReturns) != 2 || s.MonthlyReturns[0].Month != "2026-02" || !near(s.MonthlyReturns[0].Return, -0.01) ||
		s.MonthlyReturns[1].Month != "2026-03" || !near(s.MonthlyReturns[1].Return, 0.1) {
		t.Errorf("monthly: %+v", s.MonthlyReturns)
	}
}

func TestComputeFlows(t *testing.T) {
	// A deposit of 1,000 doubles the equity on a day the market did not
	// move, then the portfolio gains 1 %, and a withdrawal of 500 follows
	// a flat day: the only return is the 1 %.
	s := copytrading.Compute(curve(t,
		[3]string{"2026-03-02", "1000", ""},
		[3]string{"2026-03-03", "2000", "1000"},
		[3]string{"2026-03-04", "2020", ""},
		[3]string{"2026-03-05", "1520", "-500"},
	))
	if !near(s.TotalReturn, 0.01) || s.MaxDrawdown != 0 || s.Days != 3 {
		t.Errorf("%+v", s)
	}
	// Without the flows the deposit would read as +100 %.
	naive := copytrading.Compute(curve(t, [3]string{"2026-03-02", "1000", ""}, [3]string{"2026-03-03", "2000", ""}))
	if !near(naive.TotalReturn, 1) {
		t.Errorf("naive: %+v", naive)
	}
}

func TestComputeEdges(t *testing.T) {
	for name, days := range map[string][]copytrading.Day{
		"none":          nil,
		"one":           curve(t, [3]string{"2026-03-02", "100", ""}),
		"flat":          curve(t, [3]string{"2026-03-02", "100", ""}, [3]string{"2026-03-03", "100", ""}, [3]string{"2026-03-04", "100", ""}),
		"empty account": curve(t, [3]string{"2026-03-02", "0", ""}, [3]string{"2026-03-03", "0", ""}),
	} {
		s := copytrading.Compute(days)
		if s.TotalReturn != 0 || s.SharpeRatio != 0 || s.MaxDrawdown != 0 || s.MonthlyReturns == nil {
			t.Errorf("%s: %+v", name, s)
		}
	}
	// An account emptied and funded again: the day after the empty one
	// has no return, the chain resumes.
	s := copytrading.Compute(curve(t,
		[3]string{"2026-03-02", "100", ""}, [3]string{"2026-03-03", "0", "-100"},
		[3]string{"2026-03-04", "50", "50"}, [3]string{"2026-03-05", "55", ""}))
	if !near(s.TotalReturn, 0.1) || s.Days != 2 {
		t.Errorf("refunded: %+v", s)
	}
}
