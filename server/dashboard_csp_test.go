package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

var (
	inlineTag   = regexp.MustCompile(`(?i)<(script|style)\b[^>]*>`)
	eventHandle = regexp.MustCompile(`(?i)<[^>]*\son[a-z]+\s*=`)
	nonceSource = regexp.MustCompile(`'nonce-([A-Za-z0-9+/_=-]+)'`)
)

// checkCSP checks one dashboard answer: its Content-Security-Policy
// allows no 'unsafe-inline' script or style, only its own nonce, which
// every inline <script> and <style> element of the page carries; no
// element has an inline event handler, which no nonce allows. It returns
// the nonce ("" for an answer that is no page, which may run nothing) and
// the number of script elements.
func checkCSP(t *testing.T, what string, h http.Header, body string) (nonce string, scripts int) {
	t.Helper()
	directives := map[string]string{}
	for _, d := range strings.Split(h.Get("Content-Security-Policy"), ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	for _, name := range []string{"script-src", "style-src"} {
		v, ok := directives[name]
		if !ok || strings.Contains(v, "'unsafe-inline'") || strings.Contains(v, "'unsafe-hashes'") {
			t.Errorf("%s: %s %q, want a nonce or 'none', never 'unsafe-inline'", what, name, v)
		}
	}
	if m := nonceSource.FindStringSubmatch(directives["script-src"]); m != nil {
		nonce = m[1]
	}
	if !strings.HasPrefix(body, "<!doctype html>") {
		return nonce, 0 // a redirect's or an error's few words
	}
	if nonce == "" || directives["style-src"] != "'nonce-"+nonce+"'" {
		t.Errorf("%s: a page whose script-src %q and style-src %q do not allow one nonce", what,
			directives["script-src"], directives["style-src"])
	}
	for _, tag := range inlineTag.FindAllStringSubmatch(body, -1) {
		if !strings.Contains(tag[0], ` nonce="`+nonce+`"`) {
			t.Errorf("%s: %s lacks the response's nonce %q", what, tag[0], nonce)
		}
		if strings.EqualFold(tag[1], "script") {
			scripts++
		}
	}
	if m := eventHandle.FindString(body); m != "" {
		t.Errorf("%s: an inline event handler, which the policy blocks: %.120s", what, m)
	}
	return nonce, scripts
}

// TestDashboardCSP renders every kind of dashboard page, signed out and
// in, including those with a Copy button: each carries a fresh nonce in
// its Content-Security-Policy and on each of its inline scripts and
// styles, and no policy allows 'unsafe-inline' scripts.
func TestDashboardCSP(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	srv := httptest.NewServer(server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler())
	defer srv.Close()
	mustDashboardUser(t, db, "csp@example.com", true, "csp password 123")
	v := newVisitor(t, srv.URL)
	seen := map[string]string{}
	check := func(what string, status int, h http.Header, body string) int {
		t.Helper()
		nonce, scripts := checkCSP(t, what, h, body)
		if other, ok := seen[nonce]; ok && nonce != "" {
			t.Errorf("%s: the nonce of %s again", what, other)
		}
		seen[nonce] = what
		return scripts
	}

	s, h, page := v.do("/dashboard/sign-in", nil)
	check("GET sign-in", s, h, page)
	s, h, body := v.do("/dashboard/", nil)
	check("GET /dashboard/ (a redirect)", s, h, body)
	s, h, body = v.do("/dashboard/sign-in", url.Values{"csrf": {v.csrf(page)}, "email": {"csp@example.com"}, "password": {"wrong"}})
	check("a failed sign-in", s, h, body)
	s, h, body = v.do("/dashboard/settings/api-keys", url.Values{"name": {"no token"}})
	check("a forbidden post (the error page)", s, h, body)

	keys := v.signIn("csp@example.com", "csp password 123")
	token := v.csrf(keys)
	for _, path := range []string{"/dashboard/usage", "/dashboard/settings/api-keys", "/dashboard/settings/members",
		"/dashboard/brokers", "/dashboard/orders", "/dashboard/guardrails", "/dashboard/copy-trading"} {
		s, h, body := v.do(path, nil)
		if s != http.StatusOK {
			t.Errorf("GET %s: %d", path, s)
		}
		check("GET "+path, s, h, body)
	}
	s, h, body = v.do("/dashboard/guardrails", url.Values{"csrf": {token}, "maxDailyTrades": {"0"}})
	if check("a refused guardrails form", s, h, body); s != http.StatusBadRequest {
		t.Errorf("a refused guardrails form: %d, want 400", s)
	}
	s, h, body = v.do("/dashboard/settings/api-keys", url.Values{"csrf": {token}, "name": {"csp"}})
	if n := check("a new key", s, h, body); s != http.StatusOK || n == 0 || !strings.Contains(body, `data-copy="new-key"`) {
		t.Errorf("a new key: %d, %d scripts, want its Copy button and the script that runs it", s, n)
	}
	s, h, body = v.do("/dashboard/settings/members", url.Values{"csrf": {token}, "email": {"new@example.com"}, "name": {"New"}})
	if n := check("an invitation", s, h, body); s != http.StatusOK || n == 0 || !strings.Contains(body, `data-copy="invite-link"`) {
		t.Errorf("an invitation: %d, %d scripts, want its Copy button and the script that runs it", s, n)
	}
}
