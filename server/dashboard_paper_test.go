package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
)

var (
	paperFormToken = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
	paperNewKey    = regexp.MustCompile(`<dt>Key ID</dt>\s*<dd><code>(PK[A-Z2-7]{18})</code></dd>\s*<dt>Secret key</dt>\s*<dd><code>([^<]+)</code></dd>`)
)

// TestDashboardPaperKeys follows the dashboard's button on a paper
// connection to the paper broker's account page, signed in, creates an
// API key there and calls the paper broker's API with it, on both
// databases; another user's connection, or a form without the
// dashboard's CSRF token, goes nowhere, and the sign-in link opened in
// another browser signs in to nothing.
func TestDashboardPaperKeys(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		ts := startTrading(t, db)
		v, key, conn := mustDashboardTrader(t, ts, db, "paper-keys@example.com")
		var number string
		for _, c := range ts.call(t, "GET", "/api/v1/brokers/connections", key).list(t) {
			if c["id"] == conn {
				number = c["accountName"].(string)
			}
		}
		if number == "" {
			t.Fatal("the connection has no account number")
		}

		_, _, page := v.do("/dashboard/brokers/"+conn, nil)
		if !strings.Contains(page, `action="/dashboard/brokers/`+conn+`/paper-account"`) {
			t.Fatalf("no paper account button on the connection's page:\n%s", mainOf(page))
		}
		token := v.csrf(page)
		if status, _, _ := v.do("/dashboard/brokers/"+conn+"/paper-account", url.Values{}); status != http.StatusForbidden {
			t.Errorf("the button without the CSRF token: %d, want 403", status)
		}
		status, h, _ := v.do("/dashboard/brokers/"+conn+"/paper-account", url.Values{"csrf": {token}})
		link := h.Get("Location")
		if status != http.StatusSeeOther || !strings.HasPrefix(link, ts.url+"/paper/account/sign-in?token=") {
			t.Fatalf("the button: %d to %q, want 303 to a sign-in link", status, link)
		}

		// In another browser (someone the link was sent to), the link
		// signs in to nothing: it is bound to the browser that asked.
		other := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := other.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Fatalf("the sign-in link in another browser: %d, cookies %v, want 403 and no session", resp.StatusCode, resp.Cookies())
		}

		// At the paper broker, in the same browser: signed in to the
		// connection's account.
		status, h, _ = v.do(strings.TrimPrefix(link, ts.url), nil)
		if status != http.StatusSeeOther || h.Get("Location") != "/paper/account" {
			t.Fatalf("the sign-in link: %d to %q", status, h.Get("Location"))
		}
		_, _, page = v.do("/paper/account", nil)
		m := paperFormToken.FindStringSubmatch(page)
		if m == nil || !strings.Contains(page, "Paper account "+number) || !strings.Contains(page, "<code>"+ts.url+"/paper</code>") {
			t.Fatalf("the account page of %s:\n%s", number, page)
		}
		status, _, page = v.do("/paper/account/keys", url.Values{"csrf_token": {m[1]}, "name": {"bot"}})
		k := paperNewKey.FindStringSubmatch(page)
		if status != http.StatusOK || k == nil {
			t.Fatalf("create a key: %d\n%s", status, page)
		}

		req, _ := http.NewRequest(http.MethodGet, ts.url+"/paper/v2/account", nil)
		req.Header.Set("APCA-API-KEY-ID", k[1])
		req.Header.Set("APCA-API-SECRET-KEY", k[2])
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var acct struct {
			AccountNumber string `json:"account_number"`
		}
		err = json.NewDecoder(resp.Body).Decode(&acct)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || acct.AccountNumber != number {
			t.Errorf("GET /paper/v2/account with the key: %d %+v %v, want account %s", resp.StatusCode, acct, err, number)
		}

		// Another user's connection is not found.
		bob := mustKey(t, db, "bob@example.com", "pro")
		if status, _, _ := v.do("/dashboard/brokers/"+connectPaper(t, ts, bob)+"/paper-account", url.Values{"csrf": {token}}); status != http.StatusNotFound {
			t.Errorf("the button on bob's connection: %d, want 404", status)
		}
		// A disconnected connection has no button, and the form goes back.
		if status, _, _ := v.do("/dashboard/brokers/"+conn+"/disconnect", url.Values{"csrf": {token}}); status != http.StatusSeeOther {
			t.Fatalf("disconnect: %d", status)
		}
		if _, _, page := v.do("/dashboard/brokers/"+conn, nil); strings.Contains(page, "/paper-account") {
			t.Errorf("a disconnected connection shows the paper account button")
		}
		status, h, _ = v.do("/dashboard/brokers/"+conn+"/paper-account", url.Values{"csrf": {token}})
		if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/dashboard/brokers/"+conn+"?notice=") {
			t.Errorf("the button on a disconnected connection: %d to %q", status, h.Get("Location"))
		}
	})
}
