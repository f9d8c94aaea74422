package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestRoot checks GET /: a browser is sent to the dashboard, an API
// client gets where the API and the dashboard are, never the JSON 404
// (issue 40, point 14).
func TestRoot(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		browser := "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
		for _, tt := range []struct {
			name, method, accept string
			redirect             bool
		}{
			{"a browser", http.MethodGet, browser, true},
			{"a browser's HEAD", http.MethodHead, browser, true},
			{"curl", http.MethodGet, "*/*", false},
			{"no Accept", http.MethodGet, "", false},
			{"JSON", http.MethodGet, "application/json", false},
			{"HTML refused", http.MethodGet, "text/html;q=0, application/json", false},
		} {
			t.Run(tt.name, func(t *testing.T) {
				req := httptest.NewRequest(tt.method, "/", nil)
				if tt.accept != "" {
					req.Header.Set("Accept", tt.accept)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if tt.redirect {
					if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/dashboard/" {
						t.Errorf("status %d, Location %q; want 303 to /dashboard/", w.Code, w.Header().Get("Location"))
					}
					return
				}
				if w.Code != http.StatusOK {
					t.Fatalf("status %d, body %s; want 200", w.Code, w.Body)
				}
				var body struct {
					Data map[string]string `json:"data"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
					t.Fatalf("%v: %s", err, w.Body)
				}
				want := map[string]string{"api": "/api/v1", "openapi": "/api/v1/openapi.json", "dashboard": "/dashboard/"}
				if diff := cmp.Diff(want, body.Data); diff != "" {
					t.Errorf("GET / mismatch (-want +got):\n%s", diff)
				}
			})
		}
		// Other methods on / and other unknown paths keep their answers.
		for _, path := range []string{"/nope", "/api"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
			if w.Code != http.StatusNotFound {
				t.Errorf("GET %s: status %d, want 404", path, w.Code)
			}
		}
	})
}
