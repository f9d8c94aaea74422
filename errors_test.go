package tradekit_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

func TestReport(t *testing.T) {
	param := &tradekit.ParamError{Param: "from", Msg: "must be a date"}
	limit := &tradekit.Error{Kind: tradekit.ErrForbidden, Msg: "your plan allows 1 portfolio", Details: map[string]any{"limit": "portfolios"}}
	tests := []struct {
		name        string
		err         error
		code, msg   string
		param       string
		wantDetails map[string]any
	}{
		{"nil", nil, "", "", "", nil},
		{"plain", errors.New("disk full"), "INTERNAL", "", "", nil},
		{"bare kind", fmt.Errorf("marketdata: %w", tradekit.ErrNotFound), "NOT_FOUND", "", "", nil},
		{"param", fmt.Errorf("server: %w", param), "VALIDATION_ERROR", "from: must be a date", "from",
			map[string]any{"fields": []string{"from"}}},
		{"client message", fmt.Errorf("connect: %w", limit), "FORBIDDEN", "your plan allows 1 portfolio", "",
			map[string]any{"limit": "portfolios"}},
		{"client message without details", tradekit.Errorf(tradekit.ErrConflict, "the slug %s is taken", tradekit.Quote("x")),
			"CONFLICT", `the slug "x" is taken`, "", nil},
		{"of no kind", tradekit.Errorf(errors.New("elsewhere"), "kept"), "INTERNAL", "kept", "", nil},
		{"several kinds: the first", fmt.Errorf("alpaca: %w: %w", tradekit.ErrUnavailable, tradekit.ErrInvalid), "VALIDATION_ERROR", "", "", nil},
		{"the param error first", errors.Join(tradekit.Errorf(tradekit.ErrInvalid, "other"), param), "VALIDATION_ERROR",
			"from: must be a date", "from", map[string]any{"fields": []string{"from"}}},
		{"rejected", tradekit.Errorf(tradekit.ErrRejected, "over the daily trades"), "ORDER_REJECTED", "over the daily trades", "", nil},
		{"rate limited", fmt.Errorf("billing: %w", tradekit.ErrRateLimited), "RATE_LIMITED", "", "", nil},
		{"unauthorized", tradekit.ErrUnauthorized, "UNAUTHORIZED", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tradekit.Code(tt.err); got != tt.code {
				t.Errorf("Code(%v) = %q, want %q", tt.err, got, tt.code)
			}
			if got := tradekit.Message(tt.err); got != tt.msg {
				t.Errorf("Message(%v) = %q, want %q", tt.err, got, tt.msg)
			}
			if got := tradekit.Param(tt.err); got != tt.param {
				t.Errorf("Param(%v) = %q, want %q", tt.err, got, tt.param)
			}
			if diff := cmp.Diff(tt.wantDetails, tradekit.Details(tt.err)); diff != "" {
				t.Errorf("Details(%v) mismatch (-want +got):\n%s", tt.err, diff)
			}
		})
	}
}

func ExampleMessage() {
	err := fmt.Errorf("studies: %w", &tradekit.ParamError{Param: "period", Msg: "must be at least 2"})
	fmt.Println(err)
	fmt.Println(tradekit.Code(err), tradekit.Message(err))
	err = fmt.Errorf("marketdata: prices: %w", errors.New("connection refused"))
	fmt.Printf("%s %q\n", tradekit.Code(err), tradekit.Message(err))
	// Output:
	// studies: period: must be at least 2
	// VALIDATION_ERROR period: must be at least 2
	// INTERNAL ""
}

func TestStatus(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 200},
		{tradekit.ErrInvalid, 400},
		{&tradekit.ParamError{Param: "name", Msg: "too long"}, 400},
		{tradekit.ErrUnauthorized, 401},
		{tradekit.ErrForbidden, 403},
		{fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrNotFound, "no account")), 404},
		{tradekit.Errorf(tradekit.ErrConflict, "taken"), 409},
		{tradekit.ErrRejected, 422},
		{tradekit.ErrRateLimited, 429},
		{tradekit.ErrUnavailable, 503},
		{errors.New("disk on fire"), 500},
	}
	for _, tt := range tests {
		if got := tradekit.Status(tt.err); got != tt.want {
			t.Errorf("Status(%v) = %d, want %d (code %s)", tt.err, got, tt.want, tradekit.Code(tt.err))
		}
	}
}
