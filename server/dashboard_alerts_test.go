package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// mustDashboardUserOn stores a user of the plan with a password.
func mustDashboardUserOn(tb testing.TB, db bun.IDB, email, plan, password string) {
	tb.Helper()
	ctx := context.Background()
	st := billing.NewStore(db)
	p, err := st.Plan(ctx, plan)
	if err != nil {
		tb.Fatal(err)
	}
	h, err := billing.HashPassword(password, testPasswords)
	if err != nil {
		tb.Fatal(err)
	}
	u := billing.User{Email: email, Name: "Watcher", PlanID: p.ID, PasswordHash: &h}
	if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
		tb.Fatal(err)
	}
}

var (
	watchlistPath = regexp.MustCompile(`^/dashboard/watchlists/([0-9a-f-]{36})\?notice=`)
	alertLink     = regexp.MustCompile(`href="/dashboard/alerts/([0-9a-f-]{36})"`)
	webhookLink   = regexp.MustCompile(`href="/dashboard/webhooks/([0-9a-f-]{36})"`)
	webhookSecret = regexp.MustCompile(`id="webhook-secret">([^<]+)<`)
)

// page gets a dashboard page, which must answer 200 under the dashboard's
// Content-Security-Policy, and returns it.
func (v *visitor) page(path string) string {
	v.t.Helper()
	s, h, body := v.do(path, nil)
	if s != http.StatusOK {
		v.t.Fatalf("GET %s: %d\n%s", path, s, mainOf(body))
	}
	checkCSP(v.t, "GET "+path, h, body)
	return body
}

// post posts a form with the CSRF token and checks the status.
func (v *visitor) post(path, token string, form url.Values, want int) (http.Header, string) {
	v.t.Helper()
	form.Set("csrf", token)
	s, h, body := v.do(path, form)
	if s != want {
		v.t.Fatalf("POST %s %v: %d, want %d\n%s", path, form, s, want, mainOf(body))
	}
	if s != http.StatusSeeOther {
		checkCSP(v.t, "POST "+path, h, body)
	}
	return h, body
}

// TestDashboardWatchlists walks the watchlist pages over HTTP on both
// databases: create (with the errors beside the name and the plan's
// limit), add assets by symbol, the detail's closes, changes and
// indicators, rename, remove, delete, and another user's 404.
func TestDashboardWatchlists(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		srv := httptest.NewServer(server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler())
		defer srv.Close()
		mustDashboardUserOn(t, db, "watch@example.com", "free", "watch password 1") // 1 watchlist
		v := newVisitor(t, srv.URL)
		token := v.csrf(v.signIn("watch@example.com", "watch password 1"))

		page := v.page("/dashboard/watchlists")
		if !strings.Contains(page, `<a href="/dashboard/watchlists">Watchlists</a>`) || !strings.Contains(page, "No watchlists yet.") {
			t.Fatalf("watchlists page:\n%s", page)
		}
		if s, _, _ := v.do("/dashboard/watchlists", url.Values{"name": {"Tech"}}); s != 403 {
			t.Errorf("create without the form token: %d, want 403", s)
		}
		_, page = v.post("/dashboard/watchlists", token, url.Values{"name": {" "}}, 400)
		if !strings.Contains(page, `id="name-error"`) || !strings.Contains(page, "Is required.") {
			t.Errorf("create without a name:\n%s", mainOf(page))
		}
		h, _ := v.post("/dashboard/watchlists", token, url.Values{"name": {"Tech"}}, 303)
		m := watchlistPath.FindStringSubmatch(h.Get("Location"))
		if m == nil {
			t.Fatalf("create sent to %q", h.Get("Location"))
		}
		list := "/dashboard/watchlists/" + m[1]
		_, page = v.post("/dashboard/watchlists", token, url.Values{"name": {"Second"}}, 400)
		if !strings.Contains(page, "Your plan allows 1 watchlist;") || !strings.Contains(page, `value="Second"`) {
			t.Errorf("a second watchlist on the free plan:\n%s", mainOf(page))
		}

		if page = v.page(list); !strings.Contains(page, "<h1>Tech</h1>") || !strings.Contains(page, "No assets yet") {
			t.Fatalf("new watchlist:\n%s", mainOf(page))
		}
		_, page = v.post(list+"/assets", token, url.Values{"symbol": {"nope"}}, 400)
		if !strings.Contains(page, `id="symbol-error"`) || !strings.Contains(page, "No asset has the symbol &#34;NOPE&#34;.") {
			t.Errorf("add an unknown symbol:\n%s", mainOf(page))
		}
		for _, sym := range []string{"widg", "BARE"} {
			v.post(list+"/assets", token, url.Values{"symbol": {sym}}, 303)
		}
		page = v.page(list)
		// WIDG closes rise by 0.25 a day to 57.25 (see mustOrderAssets):
		// the last 20 average 54.875, the change is 0.25 / 57.
		for _, want := range []string{"<strong>WIDG</strong>", ">57.25<", "0.25 (0.44 %)", "SMA_20 54.8", "RSI_14 100.00",
			"SMA_200 –", "<strong>BARE</strong>", "no prices"} {
			if !strings.Contains(page, want) {
				t.Errorf("watchlist detail lacks %q:\n%s", want, mainOf(page))
			}
		}

		_, page = v.post(list+"/rename", token, url.Values{"name": {""}}, 400)
		if !strings.Contains(page, `id="name-error"`) {
			t.Errorf("rename to nothing:\n%s", mainOf(page))
		}
		v.post(list+"/rename", token, url.Values{"name": {"Renamed"}}, 303)
		bare := regexp.MustCompile(`action="(` + list + `/assets/[0-9a-f-]{36}/remove)"><input type="hidden" name="csrf" value="[^"]+"><button class="danger" type="submit" aria-label="Remove BARE"`).FindStringSubmatch(page)
		if bare == nil {
			t.Fatalf("no remove button for BARE:\n%s", mainOf(page))
		}
		v.post(bare[1], token, url.Values{}, 303)
		// The symbols as the rows show them: a bare "BARE" can turn up in
		// the page's random CSP nonce (base32) or CSRF token.
		if page = v.page(list); !strings.Contains(page, "<h1>Renamed</h1>") || strings.Contains(page, "<strong>BARE</strong>") ||
			!strings.Contains(page, "<strong>WIDG</strong>") {
			t.Errorf("after rename and remove:\n%s", mainOf(page))
		}

		// Another user sees no such watchlist and cannot change it.
		mustDashboardUserOn(t, db, "other@example.com", "pro", "other password 1")
		o := newVisitor(t, srv.URL)
		otoken := o.csrf(o.signIn("other@example.com", "other password 1"))
		if s, _, _ := o.do(list, nil); s != 404 {
			t.Errorf("another user's watchlist: %d, want 404", s)
		}
		o.post(list+"/delete", otoken, url.Values{}, 303)
		v.page(list)

		v.post(list+"/delete", token, url.Values{}, 303)
		if page = v.page("/dashboard/watchlists"); !strings.Contains(page, "No watchlists yet.") {
			t.Errorf("after delete:\n%s", mainOf(page))
		}
		if s, _, _ := v.do(list, nil); s != 404 {
			t.Errorf("a deleted watchlist: %d, want 404", s)
		}
	})
}

// TestDashboardAlertsAndWebhooks walks the alert and webhook pages over
// HTTP on both databases: a webhook whose secret is shown once, an alert
// with the errors beside its fields, its firing on a new bar, the
// delivery in the webhook's log, and deletions.
func TestDashboardAlertsAndWebhooks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		mustOrderAssets(t, db)
		s := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, AllowPrivateWebhooks: true, Brokers: server.BrokersConfig{SecretKey: webhookKey}}, db)
		srv := httptest.NewServer(s.Handler())
		defer srv.Close()
		rcv := &hookReceiver{}
		hs := httptest.NewServer(rcv)
		defer hs.Close()
		mustDashboardUserOn(t, db, "alert@example.com", "pro", "alert password 1")
		v := newVisitor(t, srv.URL)
		token := v.csrf(v.signIn("alert@example.com", "alert password 1"))

		// Webhooks: the secret once, then never again.
		if page := v.page("/dashboard/webhooks"); !strings.Contains(page, "No webhooks yet.") {
			t.Fatalf("webhooks page:\n%s", mainOf(page))
		}
		_, page := v.post("/dashboard/webhooks", token, url.Values{"url": {""}}, 400)
		if !strings.Contains(page, `id="url-error"`) || !strings.Contains(page, "Is required: the https URL") {
			t.Errorf("a webhook without a URL:\n%s", mainOf(page))
		}
		_, page = v.post("/dashboard/webhooks", token, url.Values{"url": {"ftp://example.com/x"}}, 400)
		if !strings.Contains(page, `id="url-error"`) || !strings.Contains(page, `value="ftp://example.com/x"`) {
			t.Errorf("an ftp webhook:\n%s", mainOf(page))
		}
		_, page = v.post("/dashboard/webhooks", token, url.Values{"url": {hs.URL}}, 200)
		secret := webhookSecret.FindStringSubmatch(page)
		if secret == nil || !strings.Contains(page, `data-copy="webhook-secret"`) || !strings.Contains(page, "<script nonce=") {
			t.Fatalf("the new webhook's secret and Copy button:\n%s", mainOf(page))
		}
		rcv.secret = secret[1]
		page = v.page("/dashboard/webhooks")
		hook := webhookLink.FindStringSubmatch(page)
		if strings.Contains(page, secret[1]) || hook == nil {
			t.Fatalf("the webhooks page shows the secret again, or not the webhook:\n%s", mainOf(page))
		}

		// Alerts: every field's error at once, then one that fires.
		page = v.page("/dashboard/alerts")
		if !strings.Contains(page, "No alerts yet.") || !strings.Contains(page, `<option value="`+hook[1]+`">`+hs.URL+`</option>`) ||
			!strings.Contains(page, `name="once" type="checkbox" checked`) {
			t.Fatalf("alerts page:\n%s", mainOf(page))
		}
		_, page = v.post("/dashboard/alerts", token, url.Values{"symbol": {"NOPE"}, "name": {""}, "condition": {"sma(close) > 1"}}, 400)
		for _, want := range []string{`id="symbol-error"`, "No asset has the symbol &#34;NOPE&#34;.", `id="name-error"`, `id="condition-error"`,
			"sma expects 2 arguments, got 1", `value="sma(close) &gt; 1"`} {
			if !strings.Contains(page, want) {
				t.Errorf("a bad alert: the page lacks %q:\n%s", want, mainOf(page))
			}
		}
		v.post("/dashboard/alerts", token, url.Values{"symbol": {"widg"}, "name": {"Above 58"}, "condition": {"close > 58"},
			"webhookId": {hook[1]}, "once": {"on"}}, 303)
		page = v.page("/dashboard/alerts")
		alert := alertLink.FindStringSubmatch(page)
		if alert == nil || !strings.Contains(page, "<code>close &gt; 58</code>") || !strings.Contains(page, "active <span class=\"muted\">(once)</span>") {
			t.Fatalf("alerts list:\n%s", mainOf(page))
		}
		if page = v.page("/dashboard/alerts/" + alert[1]); !strings.Contains(page, "It has not fired yet.") || !strings.Contains(page, hs.URL) {
			t.Errorf("a new alert's page:\n%s", mainOf(page))
		}

		// A new bar above 58, saved as an import saves it.
		c := decimal.RequireFromString("60")
		bar := marketdata.Price{AssetID: widgID, Open: c, High: c, Low: c, Close: c, Volume: 1}
		bar.Date.Year, bar.Date.Month, bar.Date.Day = time.Now().UTC().AddDate(0, 0, 1).Date()
		if err := marketdata.NewStore(db).SavePrices(ctx, []marketdata.Price{bar}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Alerts().Evaluate(ctx); err != nil || n != 1 {
			t.Fatalf("Evaluate = %d, %v; want 1", n, err)
		}
		if _, err := s.Alerts().Deliver(ctx); err != nil {
			t.Fatal(err)
		}
		page = v.page("/dashboard/alerts/" + alert[1])
		if !strings.Contains(page, "<strong>triggered</strong>") || !strings.Contains(page, `<td data-label="Bar">`+bar.Date.String()+`</td>`) {
			t.Errorf("the alert after firing:\n%s", mainOf(page))
		}
		page = v.page("/dashboard/webhooks/" + hook[1])
		if !strings.Contains(page, ">alert<") || !strings.Contains(page, ">succeeded<") || !strings.Contains(page, "HTTP 200 in ") ||
			rcv.verified != 1 || rcv.bad != 0 {
			t.Errorf("the delivery log (receiver verified %d, refused %d):\n%s", rcv.verified, rcv.bad, mainOf(page))
		}

		// Another user can neither see nor delete them.
		mustDashboardUserOn(t, db, "nosy@example.com", "pro", "nosy password 12")
		o := newVisitor(t, srv.URL)
		otoken := o.csrf(o.signIn("nosy@example.com", "nosy password 12"))
		for _, path := range []string{"/dashboard/alerts/" + alert[1], "/dashboard/webhooks/" + hook[1]} {
			if s, _, _ := o.do(path, nil); s != 404 {
				t.Errorf("another user's %s: %d, want 404", path, s)
			}
		}
		o.post("/dashboard/alerts/"+alert[1]+"/delete", otoken, url.Values{}, 303)
		o.post("/dashboard/webhooks/"+hook[1]+"/delete", otoken, url.Values{}, 303)
		v.page("/dashboard/alerts/" + alert[1])
		if page = v.page("/dashboard/webhooks"); !strings.Contains(page, hs.URL) {
			t.Error("another user deleted the webhook")
		}

		v.post("/dashboard/alerts/"+alert[1]+"/delete", token, url.Values{}, 303)
		if page = v.page("/dashboard/alerts"); !strings.Contains(page, "No alerts yet.") {
			t.Errorf("after deleting the alert:\n%s", mainOf(page))
		}
		v.post("/dashboard/webhooks/"+hook[1]+"/delete", token, url.Values{}, 303)
		if page = v.page("/dashboard/webhooks"); !strings.Contains(page, "No webhooks yet.") {
			t.Errorf("after deleting the webhook:\n%s", mainOf(page))
		}
		if page = v.page("/dashboard/webhooks/" + hook[1]); !strings.Contains(page, "A deleted webhook") || !strings.Contains(page, ">succeeded<") {
			t.Errorf("a deleted webhook's log:\n%s", mainOf(page))
		}
	})
}
