package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/consent"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestPaperConsentThroughServer checks the paper broker as `tradekit
// serve` wires it: the consent page names the Tradekit user who started
// the connection and the app, and sign-ups are limited per client
// address as the server counts addresses elsewhere: an IPv4 address, or
// the /64 network of an IPv6 one.
func TestPaperConsentThroughServer(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts := startTradingWith(t, db, server.BrokersConfig{SyncInterval: time.Hour, PaperSignupsPerHour: 2})
		key := mustKey(t, db, "Signup.User@example.com", "pro")
		h := ts.Handler()
		ts.clock.Set(time.Now().UTC().Truncate(time.Hour)) // one UTC hour, whenever the test runs

		// show creates a connection and opens its consent page from addr.
		show := func(t *testing.T, addr string) (string, url.Values, *http.Cookie) {
			t.Helper()
			created := ts.call(t, "POST", "/api/v1/brokers/connections?"+query("provider", "paper", "redirectUrl", appURL), key)
			if created.status != 200 {
				t.Fatalf("create: %d %s", created.status, created.raw)
			}
			auth, _ := url.Parse(created.object(t)["authorizationUrl"].(string))
			if auth.Query().Get("login_hint") != "signup.user@example.com" {
				t.Errorf("authorizationUrl %s: want login_hint=signup.user@example.com", auth)
			}
			req := httptest.NewRequest("GET", auth.RequestURI(), nil)
			req.RemoteAddr = addr
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			page := rec.Body.String()
			if rec.Code != 200 {
				t.Fatalf("consent page: %d %s", rec.Code, page)
			}
			_, form, err := consent.Form(auth, []byte(page), "approve")
			if err != nil {
				t.Fatal(err)
			}
			// The callback is never followed here: disconnecting frees the
			// pending connection's slot (connect.MaxPending) for the next.
			if r := ts.call(t, "DELETE", "/api/v1/brokers/connections/"+created.object(t)["id"].(string), key); r.status != 200 {
				t.Fatalf("disconnect: %d %s", r.status, r.raw)
			}
			return page, form, rec.Result().Cookies()[0]
		}
		approve := func(t *testing.T, addr string) *httptest.ResponseRecorder {
			t.Helper()
			_, form, c := show(t, addr)
			req := httptest.NewRequest("POST", "/paper/oauth/authorize", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(c)
			req.RemoteAddr = addr
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}

		page, _, _ := show(t, "192.0.2.10:4000")
		for _, want := range []string{
			"<h1>Connect Tradekit to a paper account</h1>",
			"<dd><strong>signup.user@example.com</strong> at Tradekit: the user Tradekit says started this connection.",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the consent page lacks %q:\n%s", want, page)
			}
		}

		for _, tt := range []struct {
			addr       string
			wantStatus int
		}{
			{"[2001:db8:1:2::1]:4000", 303},
			{"[2001:db8:1:2:ffff::9]:4001", 303}, // the same /64
			{"[2001:db8:1:2:abcd::1]:4002", 429}, // the same /64, a third time
			{"[2001:db8:1:3::1]:4000", 303},      // another /64
			{"192.0.2.10:4000", 303},
			{"192.0.2.10:4001", 303},
			{"192.0.2.10:4002", 429}, // the same address, another port
			{"192.0.2.11:4000", 303},
		} {
			rec := approve(t, tt.addr)
			if rec.Code != tt.wantStatus {
				t.Errorf("approval from %s: %d, want %d\n%s", tt.addr, rec.Code, tt.wantStatus, rec.Body)
			}
			if tt.wantStatus == 429 && rec.Header().Get("Retry-After") != "3600" {
				t.Errorf("approval from %s: 429 with Retry-After %q, want 3600 (the hour)", tt.addr, rec.Header().Get("Retry-After"))
			}
			if tt.wantStatus == 303 && !strings.Contains(rec.Header().Get("Location"), "/api/v1/brokers/oauth/callback?code=") {
				t.Errorf("approval from %s: sent to %q, want the callback with a code", tt.addr, rec.Header().Get("Location"))
			}
		}
	})
}
