package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestNeedsQueryCheck checks the fast path of the query screening: a query
// it passes must be one checkQuery accepts.
func TestNeedsQueryCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q    string
		want bool
	}{
		{"", false},
		{"indicator=RSI&params=%7B%22period%22%3A14%7D", false},
		{"name=a+b&formula=close%20-%201", false},
		{"name=n%00ul", true},
		{"name=%1f", true},
		{"name=%7F", true},
		{"name=%C3%A9", true},
		{"name=%zz", true},
		{"name=%4", true},
		{"a=1;b=2", true},
		{"name=\xff", true},
		{"name=é", true},
	}
	for _, tt := range tests {
		if got := needsQueryCheck(tt.q); got != tt.want {
			t.Errorf("needsQueryCheck(%q) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

// FuzzQueryScreen checks that the fast path never lets through a query
// that checkQuery refuses.
func FuzzQueryScreen(f *testing.F) {
	for _, q := range []string{"a=1", "params=%7B%7D", "n=%00", "x=%C2%85", "k%01=v", "a=%", "a;b"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := url.ParseRequestURI("/x?" + q); err != nil {
			return // Go's server would not have parsed the request
		}
		if !needsQueryCheck(q) {
			if err := checkQuery(q); err != nil {
				t.Errorf("the fast path passes %q, which checkQuery refuses: %v", q, err)
			}
		}
	})
}

// FuzzPaths sends arbitrary paths, without a key, through the whole
// handler: none may panic (bunrouter v1.0.23 does on a NUL at a leaf, which
// the screening refuses first), and every answer is the JSON envelope or a
// redirect.
func FuzzPaths(f *testing.F) {
	s := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, dbtest.SQLite(f))
	h := s.Handler()
	for _, p := range []string{"/healthz%00", "/api/v1/knowledge/blog/posts/%00", "/api/v1/market-data/assets/symbol/KRST%2DUSD",
		"/api/v1/indicators/custom/x/evaluate", "/%C2%85", "/api/v1/roadmap", "/a%2Fb/%2e%2e/c"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		u, err := url.ParseRequestURI(p)
		if err != nil || u.Host != "" || !strings.HasPrefix(p, "/") {
			return // Go's server would refuse the request line
		}
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL, req.RequestURI = u, p
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("GET %q: 500 %s", p, rec.Body)
		}
		if rec.Code/100 != 3 && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("GET %q: %d, not JSON: %q", p, rec.Code, rec.Body)
		}
	})
}
