package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPanicIsInternal(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil)), idPrefix: "t-"}
	h := s.logRequests(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("secret table users has no column password")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/x", nil))
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 500 || body.Error.Code != "INTERNAL" || strings.Contains(rec.Body.String(), "secret") {
		t.Errorf("panic gave %d %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id on a recovered panic")
	}
}

// TestClientGoneIsNotAnError checks that a request whose client hung up is
// not logged as an internal error.
func TestClientGoneIsNotAnError(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	s := &Server{log: slog.New(slog.NewTextHandler(&log, nil)), idPrefix: "t-"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/x", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	s.writeError(rec, req, fmt.Errorf("billing: plans: %w", context.Canceled))
	if rec.Code != statusClientClosed || strings.Contains(log.String(), "internal error") {
		t.Errorf("got %d, log %q", rec.Code, log.String())
	}
}
