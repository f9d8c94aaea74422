package tradekit_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tradekit/tradekit"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("é", 900)
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", `""`},
		{"short", "ALBN", `"ALBN"`},
		{"control", "n\x00ul", `"n\x00ul"`},
		{"at the limit", strings.Repeat("x", 64), `"` + strings.Repeat("x", 64) + `"`},
		{"one over", strings.Repeat("x", 65), `"` + strings.Repeat("x", 64) + `"…`},
		{"runes, not bytes", long, `"` + strings.Repeat("é", 64) + `"…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tradekit.Quote(tt.in); got != tt.want {
				t.Errorf("Quote(%.20q…) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func ExampleError() {
	err := fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrNotFound, "asset %s not found", tradekit.Quote("ZZZ")))
	fmt.Println(err)
	var e *tradekit.Error
	if errors.As(err, &e) {
		fmt.Println(e.Msg)
	}
	fmt.Println(errors.Is(err, tradekit.ErrNotFound))
	// Output:
	// marketdata: asset "ZZZ" not found
	// asset "ZZZ" not found
	// true
}
