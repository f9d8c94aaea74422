package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// filler reads as an endless run of 'x'.
type filler struct{}

func (filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// multipartBody returns a multipart/form-data body with one file part of
// size bytes, streamed rather than held, its length and its Content-Type.
func multipartBody(size int64) (io.Reader, int64, string) {
	const boundary = "tradekit-test-boundary"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	r := io.MultiReader(strings.NewReader(head), io.LimitReader(filler{}, size), strings.NewReader(tail))
	return r, int64(len(head)) + size + int64(len(tail)), "multipart/form-data; boundary=" + boundary
}

// bodyPaths are a route of each part of the server that reads bodies, and
// one of the API, which reads none.
var bodyPaths = []string{
	"/dashboard/sign-in",
	"/api/v1/indicators/custom?name=big&formula=close",
	"/paper/oauth/authorize",
	"/paper/oauth/token",
	"/paper/v2/orders",
}

// post sends body to srv's path with the Content-Type ct; length -1 sends
// it chunked. It returns the status and the body of the answer.
func post(t *testing.T, srv *httptest.Server, path, ct string, body io.Reader, length int64) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	if length < 0 {
		req.ContentLength = 0 // the transport sends a body of unknown length chunked
	}
	req.Header.Set("Content-Type", ct)
	// The dashboard reads a sign-in's form only when the CSRF cookie is
	// there to compare it with.
	req.Header.Set("Cookie", "tk_csrf=token")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// checkAPIRefusal checks that an answer on an /api/v1 path is the JSON
// error envelope with the code VALIDATION_ERROR, as the OpenAPI document
// describes it.
func checkAPIRefusal(t *testing.T, path string, status int, h http.Header, body string) {
	t.Helper()
	if !strings.HasPrefix(path, "/api/v1/") {
		return
	}
	checkExchange(t, httptest.NewRequest(http.MethodPost, path, nil), status, h, []byte(body))
	var env struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil || env.Error.Code != "VALIDATION_ERROR" ||
		!strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Errorf("POST %s: not the error envelope with VALIDATION_ERROR: %v %s", path, err, body)
	}
}

// TestMultipartBodyRefused posts a 60 MB multipart body to the dashboard,
// the API and the paper broker, with and without a Content-Length: every
// one is refused with 415 before it is read, and nothing is left in the
// temporary directory, where Go's multipart parser keeps large parts.
func TestMultipartBodyRefused(t *testing.T) {
	db := dbtest.SQLite(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // before the server starts; os.TempDir reads it
	srv := httptest.NewServer(server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler())
	defer srv.Close()

	for _, path := range bodyPaths {
		for _, chunked := range []bool{false, true} {
			body, n, ct := multipartBody(60 << 20)
			if chunked {
				n = -1
			}
			status, h, answer := post(t, srv, path, ct, body, n)
			if status != http.StatusUnsupportedMediaType {
				t.Errorf("POST %s (chunked %v): %d %.200s, want 415", path, chunked, status, answer)
			}
			checkAPIRefusal(t, path, status, h, answer)
		}
	}
	// Content-Type is case-insensitive; Go's parser lowercases it.
	body, n, ct := multipartBody(1 << 20)
	if status, _, answer := post(t, srv, "/dashboard/sign-in", strings.ToUpper(ct[:19])+ct[19:], body, n); status != 415 {
		t.Errorf("POST MULTIPART/FORM-DATA: %d %.200s, want 415", status, answer)
	}

	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left in the temporary directory: %s", e.Name())
	}
}

// TestBodyLimit checks that a 100 KiB form is refused with 413 on every
// part of the server, with or without a Content-Length, while a form of
// exactly the limit is read and a normal sign-in still works.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	srv := httptest.NewServer(server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler())
	defer srv.Close()
	const form = "application/x-www-form-urlencoded"
	big := "email=" + strings.Repeat("a", 100<<10)

	for _, path := range bodyPaths {
		for _, n := range []int64{int64(len(big)), -1} {
			status, h, answer := post(t, srv, path, form, strings.NewReader(big), n)
			if status != http.StatusRequestEntityTooLarge || !strings.Contains(answer, "65536") {
				t.Errorf("POST %s with 100 KiB (length %d): %d %.200s, want 413 naming the limit", path, n, status, answer)
			}
			checkAPIRefusal(t, path, status, h, answer)
		}
	}

	// Exactly the limit passes the policy: the dashboard reads the form and
	// refuses it for its missing CSRF token, the token endpoint for its
	// missing client.
	exact := "email=" + strings.Repeat("a", server.MaxBodyBytes-len("email="))
	for path, want := range map[string]int{"/dashboard/sign-in": http.StatusForbidden, "/paper/oauth/token": http.StatusUnauthorized} {
		if status, _, answer := post(t, srv, path, form, strings.NewReader(exact), -1); status != want {
			t.Errorf("POST %s with exactly %d bytes: %d %.200s, want %d", path, server.MaxBodyBytes, status, answer, want)
		}
	}

	mustDashboardUser(t, db, "form@example.com", false, "form password 12")
	if keys := newVisitor(t, srv.URL).signIn("form@example.com", "form password 12"); !strings.Contains(keys, "API keys") {
		t.Errorf("the keys page after signing in: %.300s", keys)
	}
	token := url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}, "client_id": {"tradekit"}, "client_secret": {"wrong"}}
	if status, _, answer := post(t, srv, "/paper/oauth/token", form, strings.NewReader(token.Encode()), -1); status != http.StatusUnauthorized ||
		!strings.Contains(answer, "invalid_client") {
		t.Errorf("a small token request: %d %.200s, want the paper broker's 401 invalid_client", status, answer)
	}
}
