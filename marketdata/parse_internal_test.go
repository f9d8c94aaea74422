package marketdata

import (
	"testing"

	"github.com/shopspring/decimal"
)

// TestParseDecimalText compares the fast path with decimal.NewFromString
// on the forms both databases print.
func TestParseDecimalText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "101.5", want: "101.5"},
		{in: "101.500000000000000000", want: "101.5"}, // PostgreSQL NUMERIC(38,18)
		{in: "100.000000000000000000", want: "100"},
		{in: "0.000000000000000000", want: "0"},
		{in: "-0.000001", want: "-0.000001"},
		{in: "0.000000000000000001", want: "0.000000000000000001"},
		{in: "999999999999999999", want: "999999999999999999"},
		{in: "12345678901234567890.123456789012345678", want: "12345678901234567890.123456789012345678"},
		{in: "1e5", want: "100000"},
		{in: "42", want: "42"},
		{in: "", wantErr: true},
		{in: "abc", wantErr: true},
		{in: "1.2.3", wantErr: true},
		{in: "--1", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseDecimalText([]byte(tt.in))
		if tt.wantErr {
			if err == nil {
				t.Errorf("parseDecimalText(%q) = %s, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !got.Equal(decimal.RequireFromString(tt.want)) {
			t.Errorf("parseDecimalText(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestParsePriceLine(t *testing.T) {
	t.Parallel()
	p, err := parsePriceLine([]byte("2024-01-02,1.500000000000000000,2,0.5,1.25,9000000000"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Date.String() != "2024-01-02" || p.Open.String() != "1.5" || p.High.String() != "2" || p.Low.String() != "0.5" ||
		p.Close.String() != "1.25" || p.Volume != 9000000000 {
		t.Errorf("parsePriceLine = %+v", p)
	}
	for _, bad := range []string{"2024-01-02,1,2,3", "2024-13-02,1,2,3,4,5", "2024-01-02,1,2,3,4,x"} {
		if _, err := parsePriceLine([]byte(bad)); err == nil {
			t.Errorf("parsePriceLine(%q) gave no error", bad)
		}
	}
}
