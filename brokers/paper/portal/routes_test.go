package portal_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
)

// TestHandlerRoutes checks that the portal's handler routes as the
// broker's one handler did before the portal was split from it: its own
// paths with another method answer 405, /v2 paths reach the engine's API
// (which answers in Alpaca's JSON), and anything else is a 404. None of
// these requests reads the database.
func TestHandlerRoutes(t *testing.T) {
	t.Parallel()
	h := portal.New(nil, paper.New(nil, paper.Config{}), portal.Config{}).Handler()
	tests := []struct {
		method, path string
		status       int
		body         string // a part of the body, or of the Location header for a redirect
	}{
		{"GET", "/oauth/token", http.StatusMethodNotAllowed, ""},
		{"GET", "/account/keys", http.StatusMethodNotAllowed, ""},
		{"DELETE", "/oauth/authorize", http.StatusMethodNotAllowed, ""},
		{"GET", "/v2/account", http.StatusUnauthorized, `"code":40110000`},
		{"POST", "/v2/orders", http.StatusUnauthorized, `"code":40110000`},
		{"GET", "/v2/nothing", http.StatusUnauthorized, `"code":40110000`},
		{"GET", "/v2", http.StatusTemporaryRedirect, "/v2/"},
		{"GET", "/nothing", http.StatusNotFound, ""},
		{"GET", "/account/", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, nil))
			got := w.Body.String() + w.Header().Get("Location")
			if w.Code != tt.status || !strings.Contains(got, tt.body) {
				t.Errorf("%s %s = %d %q, want %d with %q", tt.method, tt.path, w.Code, got, tt.status, tt.body)
			}
		})
	}
}
