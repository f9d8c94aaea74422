package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestMethodNotAllowed checks that a path with routes for other methods
// answers 405 with Allow, and that a path without routes answers 404.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	key := mustKey(t, db, "methods@example.com", "pro")
	id := uuid.NewString()
	tests := []struct {
		method, path, allow string
	}{
		{"GET", "/api/v1/indicators/custom/" + id + "/evaluate", "POST"},
		{"POST", "/api/v1/indicators/asset/" + id + "/summary", "GET"},
		{"POST", "/api/v1/market-data/assets/" + id + "/profile", "GET"},
		{"PUT", "/api/v1/indicators/custom/" + id, "DELETE, PATCH"},
		{"DELETE", "/api/v1/indicators/custom", "GET, POST"},
		{"POST", "/api/v1/roadmap", "GET"},
		{"DELETE", "/healthz", "GET"},
		{"POST", "/api/v1/market-data/assets/symbol/KRST-USD", "GET"},
	}
	for _, tt := range tests {
		for _, k := range []string{"", key} {
			r := send(t, h, tt.method, tt.path, k)
			if r.status != http.StatusMethodNotAllowed || r.errorCode() != "METHOD_NOT_ALLOWED" || r.header.Get("Allow") != tt.allow {
				t.Errorf("%s %s: %d Allow %q %s, want 405 Allow %q", tt.method, tt.path, r.status, r.header.Get("Allow"), r.raw, tt.allow)
			}
		}
	}
	for _, path := range []string{
		"/api/v1/no-such-thing",
		"/api/v1/indicators/custom/" + id + "/evaluate/more",
		"/api/v1/market-data/assets/" + id + "/nothing",
	} {
		r := get(t, h, path, key)
		if r.status != http.StatusNotFound || r.errorCode() != "NOT_FOUND" || r.header.Get("Allow") != "" {
			t.Errorf("GET %s: %d %s, want 404", path, r.status, r.raw)
		}
	}
	if r := get(t, h, "/api/v1/no-such-thing", ""); !strings.Contains(r.errorMessage(), `no route GET "/api/v1/no-such-thing"`) {
		t.Errorf("404 message %q", r.errorMessage())
	}
	if r := get(t, h, "/api/v1/indicators/custom/"+id+"/evaluate", ""); r.errorMessage() != "GET is not allowed on this path; it allows POST" {
		t.Errorf("405 message %q", r.errorMessage())
	}
}
