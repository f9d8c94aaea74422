package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/dashboard"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// copying hands h a copy of each request, as middleware that adds to the
// context does: Go's server then never removes the temporary files of a
// multipart form parsed on the copy.
func copying(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), struct{}{}, true)))
	})
}

// TestFormPolicy serves the dashboard on its own, behind a copying
// middleware and without the server's body policy: a multipart or other
// non-form body is refused with 415 before it is read, and leaves nothing
// in the temporary directory; a form over dashboard.MaxFormBytes is
// refused with 413.
func TestFormPolicy(t *testing.T) {
	db := dbtest.SQLite(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := httptest.NewServer(copying(dashboard.New(dashboard.Config{Billing: billing.NewStore(db)})))
	defer srv.Close()

	const boundary = "b0undary"
	big := strings.Repeat("x", 40<<20) // past the 32 MiB Go's forms keep in memory
	multipart := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"csrf\"; filename=\"f\"\r\n\r\n" +
		big + "\r\n--" + boundary + "--\r\n"
	tests := []struct {
		name, ct, body string
		want           int
	}{
		{"multipart", "multipart/form-data; boundary=" + boundary, multipart, http.StatusUnsupportedMediaType},
		{"text", "text/plain", "csrf=token", http.StatusUnsupportedMediaType},
		{"no type", "", "csrf=token", http.StatusUnsupportedMediaType},
		{"too large", "application/x-www-form-urlencoded", "csrf=" + strings.Repeat("a", 100<<10), http.StatusRequestEntityTooLarge},
		// A form is read: a sign-in without a password is a 400 beside its field.
		{"a form", "application/x-www-form-urlencoded; charset=utf-8", "csrf=token&email=a%40b.example&password=", http.StatusBadRequest},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/dashboard/sign-in", strings.NewReader(tt.body))
		if tt.ct != "" {
			req.Header.Set("Content-Type", tt.ct)
		}
		req.Header.Set("Cookie", "tk_csrf=token")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("%s: %d, want %d\n%.300s", tt.name, res.StatusCode, tt.want, b)
		}
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left in the temporary directory: %s", e.Name())
	}
}
