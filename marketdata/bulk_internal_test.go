package marketdata

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestNumericOf checks that numericOf gives each number exactly: its
// coefficient and exponent make the number decimal reads from the text.
func TestNumericOf(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"0", "1", "9999", "10000", "100", "155.29", "0.05", "0.0001", "0.00001", "12345.6789",
		"187.149994", "100000000", "99999999999999999999.999999999999999999", "0.000000000000000001",
		"-3.5", "1234567890123456789012345", "0.5", "999999999999999999", "-0.000001",
	} {
		n, ok := numericOf([]byte(s))
		if !ok || !n.Valid {
			t.Errorf("numericOf(%q) refused", s)
			continue
		}
		got, want := decimal.NewFromBigInt(n.Int, n.Exp), decimal.RequireFromString(s)
		if !got.Equal(want) || got.Exponent() != want.Exponent() {
			t.Errorf("numericOf(%q) = %s (exponent %d), want %s (exponent %d)", s, got, got.Exponent(), want, want.Exponent())
		}
	}
	if _, ok := numericOf([]byte("0." + strings.Repeat("1", 20000))); ok {
		t.Error("numericOf accepted 20,000 digits after the point")
	}
}
