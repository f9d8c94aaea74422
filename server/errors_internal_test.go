package server

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tradekit/tradekit/billing"
)

// TestPasswordBusyIs503 checks that a password check refused for want of
// hashing slots answers 503 UNAVAILABLE with Retry-After and the message
// written for users, wrapped as billing wraps it.
func TestPasswordBusyIs503(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/anything", nil)
	s.writeError(rec, req, fmt.Errorf("billing: the password of a@example.com: %w", billing.ErrPasswordBusy))
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: %v", rec.Body, err)
	}
	if rec.Code != http.StatusServiceUnavailable || body.Error.Code != "UNAVAILABLE" || rec.Header().Get("Retry-After") == "" {
		t.Errorf("%d %s, Retry-After %q; want 503 UNAVAILABLE with Retry-After", rec.Code, body.Error.Code, rec.Header().Get("Retry-After"))
	}
	if want := billing.ErrPasswordBusy.Error(); body.Error.Message != want {
		t.Errorf("message %q, want %q", body.Error.Message, want)
	}
}
