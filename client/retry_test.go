package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header  string
		attempt int
		want    time.Duration
	}{
		{"3", 0, 3 * time.Second},
		{" 0 ", 2, 0},
		{now.Add(5 * time.Second).Format(http.TimeFormat), 0, 5 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, 0},
		{"", 0, time.Second},
		{"soon", 2, 4 * time.Second},
		{"", 40, 64 * time.Second},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.header, tt.attempt, now); got != tt.want {
			t.Errorf("retryAfter(%q, %d) = %v, want %v", tt.header, tt.attempt, got, tt.want)
		}
	}
}

// TestRetries checks which requests are sent again after a 429 or 503.
func TestRetries(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		switch {
		case r.URL.Query().Get("status") == "500":
			w.WriteHeader(500)
		case n == 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		case n == 2 && r.URL.Query().Get("twice") != "":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(200)
		}
	}))
	defer srv.Close()
	rt := &retrier{client: srv.Client(), retries: 3, maxWait: 10 * time.Millisecond}
	tests := []struct {
		method, path string
		status       int
		hits         int32
	}{
		{"GET", "/api/v1/billing/plans", 200, 2},
		{"GET", "/api/v1/billing/plans?twice=1", 200, 3}, // 429, then 503 without Retry-After (capped wait)
		{"POST", "/api/v1/brokers/orders?side=buy", 429, 1},
		{"POST", "/api/v1/brokers/orders?side=buy&clientOrderId=a1", 200, 2},
		{"DELETE", "/api/v1/brokers/orders/x", 200, 2},
		{"GET", "/api/v1/billing/plans?status=500", 500, 1},
	}
	for _, tt := range tests {
		hits.Store(0)
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		res, err := rt.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.status || hits.Load() != tt.hits {
			t.Errorf("%s %s: %d after %d requests, want %d after %d", tt.method, tt.path, res.StatusCode, hits.Load(), tt.status, tt.hits)
		}
	}

	// A cancelled context ends the wait.
	hits.Store(0)
	slow := &retrier{client: srv.Client(), retries: 3, maxWait: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v1/billing/plans?twice=1", nil)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	if _, err := slow.Do(req); err != context.DeadlineExceeded {
		t.Errorf("cancelled wait: error %v, want context.DeadlineExceeded", err)
	}
}
