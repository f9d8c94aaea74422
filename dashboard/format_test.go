package dashboard

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"
)

func TestCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestFigures checks the formats of leader figures, which may not exist
// (a nil *float64, or NaN): the dash, never a made-up 0.
func TestFigures(t *testing.T) {
	t.Parallel()
	v, nan := 0.0981943, math.NaN()
	tests := []struct {
		name        string
		in          any
		percent, ra string
	}{
		{"float", 0.0981943, "9.82 %", "0.10"},
		{"pointer", &v, "9.82 %", "0.10"},
		{"nil pointer", (*float64)(nil), "–", "–"},
		{"NaN", nan, "–", "–"},
		{"negative", -0.125, "-12.50 %", "-0.12"},
	}
	for _, tt := range tests {
		if got := percent(tt.in); got != tt.percent {
			t.Errorf("%s: percent(%v) = %q, want %q", tt.name, tt.in, got, tt.percent)
		}
		if got := ratio(tt.in); got != tt.ra {
			t.Errorf("%s: ratio(%v) = %q, want %q", tt.name, tt.in, got, tt.ra)
		}
	}
}

func TestDecimalText(t *testing.T) {
	t.Parallel()
	d := decimal.RequireFromString("20.125")
	for _, tt := range []struct {
		in   any
		want string
	}{
		{d, "20.125"},
		{&d, "20.125"},
		{decimal.RequireFromString("57.2786250"), "57.278625"},
		{(*decimal.Decimal)(nil), "–"},
	} {
		if got := decimalText(tt.in); got != tt.want {
			t.Errorf("decimalText(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
