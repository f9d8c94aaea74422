package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tradekit/tradekit"
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

// TestStatusOf checks that statusOf, the status the dashboard shows a
// refused request with, is the status the API answers the same error with
// (writeError), for an error of every kind; and 500 for an error of none.
func TestStatusOf(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	errs := []error{
		&tradekit.ParamError{Param: "qty", Msg: "must be positive"},
		fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrRejected, "the broker refused")),
		errMethodNotAllowed, errHeaderTooLarge, errBodyTooLarge, errUnsupportedMediaType,
	}
	for _, k := range []error{tradekit.ErrInvalid, tradekit.ErrUnauthorized, tradekit.ErrForbidden, tradekit.ErrNotFound,
		tradekit.ErrConflict, tradekit.ErrRejected, tradekit.ErrRateLimited, tradekit.ErrUnavailable} {
		errs = append(errs, fmt.Errorf("connect: order: %w", k))
	}
	for _, err := range errs {
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest(http.MethodPost, "/api/v1/brokers/orders", nil), err)
		if got := statusOf(err); got != rec.Code {
			t.Errorf("statusOf(%q) = %d, the API answers %d", err, got, rec.Code)
		}
	}
	if got := statusOf(errors.New("connect: disk full")); got != http.StatusInternalServerError {
		t.Errorf("statusOf(an error of no kind) = %d, want 500", got)
	}
}
