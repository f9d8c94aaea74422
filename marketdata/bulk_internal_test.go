package marketdata

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestAppendPGNumeric compares appendPGNumeric with PostgreSQL's own
// binary form of the same numbers, numeric_send.
func TestAppendPGNumeric(t *testing.T) {
	t.Parallel()
	db := dbtest.Postgres(t)
	for _, s := range []string{
		"0", "1", "9999", "10000", "100", "155.29", "0.05", "0.0001", "0.00001", "12345.6789",
		"187.149994", "100000000", "99999999999999999999.999999999999999999", "0.000000000000000001",
		"-3.5", "1234567890123456789012345", "0.5",
	} {
		got, ok := appendPGNumeric(nil, []byte(s))
		if !ok {
			t.Errorf("appendPGNumeric(%q) refused", s)
			continue
		}
		var want []byte
		if err := db.NewRaw("SELECT numeric_send(?::numeric)", s).Scan(context.Background(), &want); err != nil {
			t.Fatal(err)
		}
		if len(got) < 4 || int(got[0])<<24|int(got[1])<<16|int(got[2])<<8|int(got[3]) != len(got)-4 {
			t.Errorf("appendPGNumeric(%q) = % x: bad length word", s, got)
			continue
		}
		if diff := cmp.Diff(want, got[4:]); diff != "" {
			t.Errorf("appendPGNumeric(%q) mismatch with numeric_send (-want +got):\n%s", s, diff)
		}
	}
	if _, ok := appendPGNumeric(nil, []byte("0."+string(make([]byte, 20000)))); ok {
		t.Error("appendPGNumeric accepted 20,000 digits after the point")
	}
}
