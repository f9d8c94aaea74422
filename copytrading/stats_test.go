package copytrading_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/copytrading"
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

// same reports whether a and b are equal, or both NaN.
func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func TestCompute(t *testing.T) {
	t.Parallel()
	// +10 %, −10 %, +10 %: total 1.1 × 0.9 × 1.1 − 1 = 0.089; the fall
	// from 1.1 to 0.99 is −10 %; mean/sd = (1/30)/(√(0.04/3)) = 1/(2√3),
	// so the Sharpe ratio is √252/(2√3) = √21.
	s := copytrading.Compute(curve(t,
		[3]string{"2026-01-30", "100", ""},
		[3]string{"2026-02-02", "110", ""},
		[3]string{"2026-02-27", "99", ""},
		[3]string{"2026-03-02", "108.9", ""},
	))
	// Rounded to 8 places, the figures are the float64s nearest the
	// decimals: √21 = 4.58257569495584…
	want := copytrading.Statistics{TotalReturn: 0.089, SharpeRatio: 4.58257569, MaxDrawdown: -0.1, Days: 3,
		MonthlyReturns: []copytrading.Month{{Month: "2026-02", Return: -0.01}, {Month: "2026-03", Return: 0.1}}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Compute() mismatch (-want +got):\n%s", diff)
	}
}

// TestComputeRounding checks that the figures carry no binary noise: the
// total return of 100 → 104.3 → 109.81943, chained in float64, is
// 0.09819430000000007; rounded to 8 places it is 0.0981943, whose
// shortest text (as the API writes it) is the decimal.
func TestComputeRounding(t *testing.T) {
	t.Parallel()
	s := copytrading.Compute(curve(t,
		[3]string{"2026-03-02", "100", ""},
		[3]string{"2026-03-03", "104.3", ""},
		[3]string{"2026-03-04", "109.81943", ""},
	))
	for _, f := range []struct {
		name string
		got  float64
		want string
	}{
		{"totalReturn", s.TotalReturn, "0.0981943"},
		{"maxDrawdown", s.MaxDrawdown, "0"},
		{"monthly", s.MonthlyReturns[0].Return, "0.0981943"},
		// Returns 0.043 and 0.05291879…: mean 0.04795940, sd 0.00701365,
		// × √252 = 108.550091087… (Python's decimal module at 50 digits).
		{"sharpeRatio", s.SharpeRatio, "108.55009109"},
	} {
		if got := strconv.FormatFloat(f.got, 'g', -1, 64); got != f.want {
			t.Errorf("%s = %s, want %s", f.name, got, f.want)
		}
	}
}

func TestComputeFlows(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	// A figure that does not exist is NaN, never a made-up 0: no return
	// has no drawdown, fewer than two returns or returns that do not
	// vary have no Sharpe ratio.
	nan := math.NaN()
	tests := []struct {
		name             string
		days             []copytrading.Day
		sharpe, drawdown float64
		days2            int
	}{
		{"none", nil, nan, nan, 0},
		{"one day", curve(t, [3]string{"2026-03-02", "100", ""}), nan, nan, 0},
		{"one return", curve(t, [3]string{"2026-03-02", "100", ""}, [3]string{"2026-03-03", "101", ""}), nan, 0, 1},
		{"flat", curve(t, [3]string{"2026-03-02", "100", ""}, [3]string{"2026-03-03", "100", ""}, [3]string{"2026-03-04", "100", ""}), nan, 0, 2},
		{"empty account", curve(t, [3]string{"2026-03-02", "0", ""}, [3]string{"2026-03-03", "0", ""}), nan, nan, 0},
	}
	for _, tt := range tests {
		s := copytrading.Compute(tt.days)
		if !same(s.SharpeRatio, tt.sharpe) || !same(s.MaxDrawdown, tt.drawdown) || s.Days != tt.days2 || s.MonthlyReturns == nil {
			t.Errorf("%s: Compute() = %+v, want Sharpe %v, drawdown %v, %d days", tt.name, s, tt.sharpe, tt.drawdown, tt.days2)
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
