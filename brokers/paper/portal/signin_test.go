package portal

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/tradekit/tradekit"
)

// TestKeyRefusal checks that a refused new key answers the status of its
// error's kind, not 409 for every kind: an account that is gone is a 404.
func TestKeyRefusal(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantMsg    string
		wantOK     bool
	}{
		{"name", fmt.Errorf("paper: %w", &tradekit.ParamError{Param: "name", Msg: "must not contain a NUL character"}),
			http.StatusBadRequest, "The name must not contain a NUL character.", true},
		{"too many keys", fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrConflict, "an account holds at most 10 API keys: revoke one first")),
			http.StatusConflict, "An account holds at most 10 API keys: revoke one first.", true},
		{"account gone", fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrNotFound, "account %s not found", tradekit.Quote("x"))),
			http.StatusNotFound, `Account "x" not found.`, true},
		{"kind without a message", fmt.Errorf("paper: %w", tradekit.ErrForbidden), 0, "", false},
		{"internal", errors.New("paper: create API key: connection reset"), 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, msg, ok := keyRefusal(tt.err)
			if status != tt.wantStatus || msg != tt.wantMsg || ok != tt.wantOK {
				t.Errorf("keyRefusal(%v) = %d, %q, %v; want %d, %q, %v", tt.err, status, msg, ok, tt.wantStatus, tt.wantMsg, tt.wantOK)
			}
		})
	}
}
