package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestDashboardEchoesCut posts 60 KB into each field of the watchlist,
// asset, alert and webhook forms: the refused page quotes at most 64
// characters of it, in the error and in the form filled again.
func TestDashboardEchoesCut(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		srv := httptest.NewServer(server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler())
		defer srv.Close()
		mustDashboardUserOn(t, db, "echo@example.com", "pro", "echo password 1")
		v := newVisitor(t, srv.URL)
		token := v.csrf(v.signIn("echo@example.com", "echo password 1"))
		h, _ := v.post("/dashboard/watchlists", token, url.Values{"name": {"Tech"}}, http.StatusSeeOther)
		m := watchlistPath.FindStringSubmatch(h.Get("Location"))
		if m == nil {
			t.Fatalf("create sent to %q", h.Get("Location"))
		}
		big := strings.Repeat("x", 60<<10)
		alert := func(field string) url.Values {
			f := url.Values{"symbol": {"WIDG"}, "name": {"A"}, "condition": {"close > 1"}}
			f.Set(field, big)
			return f
		}
		for _, c := range []struct {
			path string
			form url.Values
		}{
			{"/dashboard/watchlists", url.Values{"name": {big}}},
			{"/dashboard/watchlists/" + m[1] + "/rename", url.Values{"name": {big}}},
			{"/dashboard/watchlists/" + m[1] + "/assets", url.Values{"symbol": {big}}},
			{"/dashboard/alerts", alert("symbol")},
			{"/dashboard/alerts", alert("name")},
			{"/dashboard/alerts", alert("condition")},
			{"/dashboard/webhooks", url.Values{"url": {"https://" + big}}},
		} {
			form := c.form
			form.Set("csrf", token)
			s, _, body := v.do(c.path, form)
			if s != http.StatusBadRequest {
				t.Errorf("POST %s with 60 KB: %d, want 400", c.path, s)
			}
			if n := longestRun(strings.ToUpper(body), 'X'); n > 64 {
				t.Errorf("POST %s with 60 KB: the page echoes %d characters of it, want at most 64", c.path, n)
			}
		}
	})
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// TestDashboardNotices: a page shows the fixed text of a notice code the
// server defined, and nothing for any other text of ?notice=, nor the
// text of the brokers page's ?error=.
func TestDashboardNotices(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts := startTrading(t, db)
		mustDashboardUserOn(t, db, "notice@example.com", "pro", "notice password 1")
		v := newVisitor(t, ts.url)
		v.signIn("notice@example.com", "notice password 1")
		forged := "Your account is suspended: call +1 555 0100"
		for _, path := range []string{"/dashboard/watchlists", "/dashboard/usage", "/dashboard/settings/api-keys", "/dashboard/brokers"} {
			page := v.page(path + "?" + url.Values{"notice": {forged}}.Encode())
			if strings.Contains(page, "suspended") || strings.Contains(page, `class="notice"`) {
				t.Errorf("%s shows the URL's notice:\n%s", path, mainOf(page))
			}
		}
		if page := v.page("/dashboard/watchlists?notice=watchlist-deleted"); !strings.Contains(page, `<p class="notice" role="status">Deleted the watchlist.</p>`) {
			t.Errorf("a known notice code:\n%s", mainOf(page))
		}
		page := v.page("/dashboard/brokers?" + url.Values{"error": {forged}, "connectionId": {uuid.NewString()}}.Encode())
		if strings.Contains(page, "suspended") || !strings.Contains(page, "The broker did not connect.") {
			t.Errorf("the brokers page with ?error=:\n%s", mainOf(page))
		}
	})
}

// TestNULRefused: a NUL in a dashboard form's field, or escaped in a
// string of an API's JSON parameter, is a 400 naming the parameter, and
// nothing is stored.
func TestNULRefused(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		srv := httptest.NewServer(server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler())
		defer srv.Close()
		mustDashboardUserOn(t, db, "nul@example.com", "pro", "nul password 1")
		v := newVisitor(t, srv.URL)
		token := v.csrf(v.signIn("nul@example.com", "nul password 1"))
		for _, name := range []string{"a\x00b", "\x00"} {
			s, _, body := v.do("/dashboard/watchlists", url.Values{"csrf": {token}, "name": {name}})
			if s != http.StatusBadRequest || !strings.Contains(body, "The parameter &#34;name&#34; holds a NUL character") {
				t.Errorf("a watchlist named %q: %d\n%s", name, s, mainOf(body))
			}
		}
		if page := v.page("/dashboard/watchlists"); !strings.Contains(page, "No watchlists yet.") {
			t.Errorf("a watchlist was stored:\n%s", mainOf(page))
		}

		key := mustKey(t, db, "nulapi@example.com", "pro")
		h := srv.Config.Handler
		asset := get(t, h, "/api/v1/market-data/assets/symbol/WIDG", key).object(t)["id"].(string)
		for _, params := range []string{`{"period":14,"x\u0000":1}`, `{"period":14,"note":"a\u0000b"}`, `{"period":14,"l":["\u0001"]}`} {
			r := get(t, h, "/api/v1/indicators/asset/"+asset+"?"+query("indicator", "SMA", "params", params), key)
			wantInvalid(t, "params "+params, r, "params")
			if !strings.Contains(r.errorMessage(), "control character U+000") {
				t.Errorf("params %s: %q does not name the control character", params, r.errorMessage())
			}
		}
		for _, q := range []string{"name=a%00b", query("name", "a\x00b")} {
			wantInvalid(t, "watchlist "+q, send(t, h, "POST", "/api/v1/watchlists?"+q, key), "name")
		}
	})
}
