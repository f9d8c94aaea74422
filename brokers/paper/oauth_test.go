package paper_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestOAuthFlow drives the whole flow as a browser and a client using
// golang.org/x/oauth2 would: consent page, approval, code exchange with
// PKCE, API call, refresh, revocation. It then checks that no code or
// token appears in plain text anywhere in the paper_* tables.
func TestOAuthFlow(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		var secrets []string // every code and token the flow handed out

		// The browser opens the consent page.
		verifier := oauth2.GenerateVerifier()
		br := e.browser(t)
		resp, page := br.get(e.conf.AuthCodeURL("xyz-state", oauth2.S256ChallengeOption(verifier)))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("consent page: %s\n%s", resp.Status, page)
		}
		for k, want := range map[string]string{
			"Content-Type":            "text/html; charset=utf-8",
			"X-Frame-Options":         "DENY",
			"Cache-Control":           "no-store",
			"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
		} {
			if got := resp.Header.Get(k); got != want {
				t.Errorf("consent page %s = %q, want %q", k, got, want)
			}
		}
		for _, want := range []string{
			`<html lang="en">`,
			"<h1>Connect Tradekit Test to a paper account</h1>",
			"with 100,000.00 USD of play money",
			"place, change and cancel orders, and close positions, in the account",
			"change the account&#39;s settings",
			"You are sent back to 127.0.0.1:1.",
			"<legend>Open a paper account with 100,000.00 USD of play money for Tradekit Test?</legend>",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the consent page lacks %q:\n%s", want, page)
			}
		}
		if strings.Contains(strings.ToLower(page), "<script") {
			t.Errorf("the consent page has a script")
		}
		cookies := resp.Cookies()
		if len(cookies) != 1 {
			t.Fatalf("cookies %v, want the CSRF cookie", cookies)
		}
		c := cookies[0]
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/paper/oauth/authorize" {
			t.Errorf("CSRF cookie %v: want HttpOnly, SameSite=Strict, Path=/paper/oauth/authorize", c)
		}
		f := parseForm(t, page)
		if f.Action != "/paper/oauth/authorize" || f.Method != "post" {
			t.Errorf("form %s %s, want post /paper/oauth/authorize", f.Method, f.Action)
		}
		if diff := cmp.Diff([]string{"decision=approve", "decision=deny"}, f.Buttons); diff != "" {
			t.Errorf("buttons (-want +got):\n%s", diff)
		}
		wantFields := url.Values{
			"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI}, "state": {"xyz-state"},
			"scope": {"account:write trading"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)},
			"code_challenge_method": {"S256"}, "csrf_token": {f.Fields.Get("csrf_token")},
		}
		if diff := cmp.Diff(wantFields, f.Fields); diff != "" {
			t.Errorf("hidden fields (-want +got):\n%s", diff)
		}
		// The CSRF token is the broker's signature, not the cookie's value.
		csrf := f.Fields.Get("csrf_token")
		if !regexp.MustCompile(`^[A-Za-z0-9_-]{32}\.[A-Za-z0-9_-]{43}$`).MatchString(csrf) || strings.Contains(csrf, c.Value) {
			t.Errorf("csrf_token %q: want a signed token (nonce and expiry, HMAC) unrelated to the cookie %q", csrf, c.Value)
		}
		if n := count(t, db, "paper_accounts"); n != 0 {
			t.Errorf("the consent page opened %d accounts", n)
		}

		// The user approves; the broker sends the browser back with a code.
		f.Fields.Set("decision", "approve")
		resp, body := br.post(e.srv.URL+f.Action, f.Fields)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("approve: %s, want 303\n%s", resp.Status, body)
		}
		q := redirectQuery(t, resp, redirectURI)
		code := q.Get("code")
		if q.Get("state") != "xyz-state" || len(code) < 22 { // 22 base64 characters hold 128 bits
			t.Fatalf("redirect query %v: want the state and a code of 128 bits or more", q)
		}
		secrets = append(secrets, code)

		// The client exchanges the code.
		tok, err := e.conf.Exchange(e.ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, tok.AccessToken, tok.RefreshToken)
		if tok.TokenType != "bearer" || tok.RefreshToken == "" || tok.Extra("scope") != "account:write trading" {
			t.Errorf("token %+v, scope %v: want a bearer token, a refresh token and the scope", tok, tok.Extra("scope"))
		}
		if got := tok.Extra("expires_in"); got != float64(3600) {
			t.Errorf("expires_in = %v, want 3600", got)
		}

		// The token reads the new account.
		var a alpaca.AccountJSON
		if status := e.get(t, tok.AccessToken, "/v2/account", &a); status != http.StatusOK {
			t.Fatalf("GET /v2/account: %d", status)
		}
		hundredK := decimal.RequireFromString("100000")
		want := alpaca.AccountJSON{
			ID: a.ID, AccountNumber: a.AccountNumber, Status: "ACTIVE", CryptoStatus: "ACTIVE", Currency: "USD",
			Cash: hundredK, BuyingPower: hundredK, PortfolioValue: hundredK, Equity: hundredK, LastEquity: hundredK,
			RegTBuyingPower: hundredK, EffectiveBuyingPower: hundredK, NonMarginableBuyingPower: hundredK,
			Multiplier: decimal.New(1, 0), CreatedAt: t0, BalanceAsOf: "2026-03-01",
		}
		if diff := cmp.Diff(want, a); diff != "" {
			t.Errorf("GET /v2/account mismatch (-want +got):\n%s", diff)
		}
		if !strings.HasPrefix(a.AccountNumber, "PA") || len(a.AccountNumber) != 12 {
			t.Errorf("account number %q, want PA and 10 characters", a.AccountNumber)
		}

		// The client refreshes: a new access token, and a new refresh token.
		e.clock.Add(30 * time.Minute)
		old := *tok
		tok.Expiry = time.Now().Add(-time.Hour) // make the token source refresh
		tok2, err := e.conf.TokenSource(e.ctx, tok).Token()
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, tok2.AccessToken, tok2.RefreshToken)
		if tok2.AccessToken == old.AccessToken || tok2.RefreshToken == old.RefreshToken || tok2.RefreshToken == "" {
			t.Errorf("refresh did not rotate: %+v after %+v", tok2, old)
		}
		var a2 alpaca.AccountJSON
		if status := e.get(t, tok2.AccessToken, "/v2/account", &a2); status != http.StatusOK || a2.ID != a.ID {
			t.Errorf("GET /v2/account with the refreshed token: %d, account %s, want 200 and %s", status, a2.ID, a.ID)
		}
		// The first access token lives until it expires.
		if status := e.get(t, old.AccessToken, "/v2/account", &a2); status != http.StatusOK {
			t.Errorf("GET /v2/account with the first access token before it expired: %d", status)
		}

		// Revoking the access token shuts it out at once.
		e.revoke(t, tok2.AccessToken)
		var ej alpaca.ErrorJSON
		if status := e.get(t, tok2.AccessToken, "/v2/account", &ej); status != http.StatusUnauthorized || ej != unauthorized {
			t.Errorf("GET /v2/account with a revoked token: %d %+v, want 401 %+v", status, ej, unauthorized)
		}
		// Revoking the refresh token ends the connection.
		e.revoke(t, tok2.RefreshToken)
		if _, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok2.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
			t.Errorf("refresh with a revoked refresh token: %v, want invalid_grant", err)
		}
		if status := e.get(t, old.AccessToken, "/v2/account", &ej); status != http.StatusUnauthorized {
			t.Errorf("GET /v2/account with an access token of a revoked grant: %d, want 401", status)
		}
		// Unknown tokens answer 200.
		e.revoke(t, "no-such-token")

		mustHoldNoSecrets(t, db, secrets, []string{c.Value, csrf})
	})
}

// mustHoldNoSecrets checks that no secret appears in any column of any
// row of the paper_* tables, and that the hex SHA-256 of each hashed one
// (the codes and tokens) is stored.
func mustHoldNoSecrets(t *testing.T, db *bun.DB, hashed, others []string) {
	t.Helper()
	ctx := context.Background()
	rows := 0
	stored := map[string]bool{}
	for _, table := range []string{"paper_accounts", "paper_positions", "paper_orders", "paper_grants", "paper_tokens",
		"paper_consent_nonces", "paper_signups"} {
		rs, err := db.QueryContext(ctx, "SELECT * FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rs.Columns()
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			rows++
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				for _, s := range append(hashed, others...) {
					if s == "" {
						t.Fatal("an empty secret")
					}
					if strings.Contains(v.String, s) {
						t.Errorf("%s.%s holds a secret in plain text: %q", table, cols[i], v.String)
					}
				}
				if cols[i] == "token_hash" || cols[i] == "code_hash" {
					stored[v.String] = true
				}
			}
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		rs.Close()
	}
	if rows == 0 {
		t.Fatal("the paper_* tables are empty")
	}
	for _, s := range hashed {
		sum := sha256.Sum256([]byte(s))
		if !stored[hex.EncodeToString(sum[:])] {
			t.Errorf("no stored hash for a code or token")
		}
	}
}

// TestAuthorizeDeny checks that denying sends access_denied with the
// state and opens no account.
func TestAuthorizeDeny(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		q := e.consent(t, e.browser(t), e.authURL("st8"), "deny")
		if q.Get("error") != "access_denied" || q.Get("state") != "st8" || q.Get("code") != "" {
			t.Errorf("redirect query %v, want error=access_denied and state=st8", q)
		}
		if n := count(t, db, "paper_accounts"); n != 0 {
			t.Errorf("%d accounts after a denial, want 0", n)
		}
	})
}

// TestAuthorizeCSRF checks that a decision whose CSRF token the broker
// did not sign for this request and this browser, or whose token has
// expired, answers 403 with an error page, redirects nowhere and opens no
// account. Before the fix, any cookie and form token that agreed passed.
func TestAuthorizeCSRF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(e *env, f url.Values, c *http.Cookie) // changes the form, the cookie or the clock
	}{
		{"no form token", func(e *env, f url.Values, c *http.Cookie) { f.Del("csrf_token") }},
		{"empty form token", func(e *env, f url.Values, c *http.Cookie) { f.Set("csrf_token", "") }},
		{"wrong form token", func(e *env, f url.Values, c *http.Cookie) { f.Set("csrf_token", oauth2.GenerateVerifier()) }},
		{"token repeated", func(e *env, f url.Values, c *http.Cookie) { f.Add("csrf_token", f.Get("csrf_token")) }},
		{"no cookie", func(e *env, f url.Values, c *http.Cookie) { c.Name = "" }},
		{"another browser's cookie", func(e *env, f url.Values, c *http.Cookie) { c.Value = oauth2.GenerateVerifier() }},
		{"client-chosen pair", func(e *env, f url.Values, c *http.Cookie) {
			// The double submit of old: the same value in both places.
			c.Value = oauth2.GenerateVerifier()
			f.Set("csrf_token", c.Value)
		}},
		{"client-chosen signature", func(e *env, f url.Values, c *http.Cookie) {
			payload, _, _ := strings.Cut(f.Get("csrf_token"), ".")
			f.Set("csrf_token", payload+"."+strings.Repeat("A", 43))
		}},
		{"expiry moved", func(e *env, f url.Values, c *http.Cookie) {
			// The payload is the nonce and the expiry (Unix seconds, big
			// endian); a day later, with the signature kept, must fail.
			payload, mac, _ := strings.Cut(f.Get("csrf_token"), ".")
			b, err := base64.RawURLEncoding.DecodeString(payload)
			if err != nil || len(b) != 24 {
				panic(fmt.Sprintf("payload %q: %v", payload, err))
			}
			binary.BigEndian.PutUint64(b[16:], binary.BigEndian.Uint64(b[16:])+86400)
			f.Set("csrf_token", base64.RawURLEncoding.EncodeToString(b)+"."+mac)
			e.clock.Add(time.Hour)
		}},
		{"expired", func(e *env, f url.Values, c *http.Cookie) { e.clock.Add(time.Hour) }},
		{"another state", func(e *env, f url.Values, c *http.Cookie) { f.Set("state", "attacker") }},
		{"another challenge", func(e *env, f url.Values, c *http.Cookie) {
			f.Set("code_challenge", oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier()))
		}},
		{"another registered redirect_uri", func(e *env, f url.Values, c *http.Cookie) { f.Set("redirect_uri", otherURI) }},
		{"another scope", func(e *env, f url.Values, c *http.Cookie) { f.Set("scope", "account:write data trading") }},
		{"a login_hint added", func(e *env, f url.Values, c *http.Cookie) { f.Set("login_hint", "mallory@example.com") }},
		{"another instance's key", func(e *env, f url.Values, c *http.Cookie) {}},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{}, portal.Config{SigningKey: key(1)})
		other := mustEnv(t, db, paper.Config{}, portal.Config{SigningKey: key(2)})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.clock.Set(t0)
				shown := e
				if tt.name == "another instance's key" {
					shown = other
				}
				resp, page := shown.browser(t).get(shown.authURL("s"))
				f := parseForm(t, page)
				c := resp.Cookies()[0]
				f.Fields.Set("decision", "approve")
				tt.edit(e, f.Fields, c)
				r, body := e.postRaw(t, f.Action, f.Fields, c)
				if r.StatusCode != http.StatusForbidden || r.Header.Get("Location") != "" {
					t.Errorf("POST: %s, Location %q, want 403 and no redirect", r.Status, r.Header.Get("Location"))
				}
				if !strings.Contains(body, "This form has expired or did not come from this broker") {
					t.Errorf("the error page does not say why:\n%s", body)
				}
				if n := count(t, db, "paper_accounts"); n != 0 {
					t.Errorf("%d accounts, want 0", n)
				}
			})
		}
	})
}

// TestAuthorizeSharedKey checks that Brokers sharing a database and a
// SigningKey accept each other's consent forms, as server instances
// behind a load balancer must, and that a form is still used only once
// across them.
func TestAuthorizeSharedKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		a := mustEnv(t, db, paper.Config{}, portal.Config{SigningKey: key(7)})
		b := mustEnv(t, db, paper.Config{}, portal.Config{SigningKey: key(7)})
		resp, page := a.browser(t).get(a.authURL("s"))
		f := parseForm(t, page)
		f.Fields.Set("decision", "approve")
		c := resp.Cookies()[0]
		r, body := b.postRaw(t, f.Action, f.Fields, c)
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("the form of one instance posted to another: %s, want 303\n%s", r.Status, body)
		}
		r, body = a.postRaw(t, f.Action, f.Fields, c)
		if r.StatusCode != http.StatusForbidden || !strings.Contains(body, "already submitted") {
			t.Errorf("the same form posted again to the first instance: %s, want 403 already submitted\n%s", r.Status, body)
		}
		if n := count(t, db, "paper_accounts"); n != 1 {
			t.Errorf("%d accounts, want 1", n)
		}
	})
}

// TestAuthorizeReplay checks that a consent form works once: posting it
// again, after an approval or a denial, or twice at once, answers 403 and
// opens no second account.
func TestAuthorizeReplay(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		for _, first := range []string{"approve", "deny"} {
			t.Run("after "+first, func(t *testing.T) {
				before := count(t, db, "paper_accounts")
				resp, page := e.browser(t).get(e.authURL("s"))
				f := parseForm(t, page)
				c := resp.Cookies()[0]
				f.Fields.Set("decision", first)
				if r, body := e.postRaw(t, f.Action, f.Fields, c); r.StatusCode != http.StatusSeeOther {
					t.Fatalf("first POST: %s, want 303\n%s", r.Status, body)
				}
				for _, again := range []string{"approve", "deny"} {
					f.Fields.Set("decision", again)
					r, body := e.postRaw(t, f.Action, f.Fields, c)
					if r.StatusCode != http.StatusForbidden || r.Header.Get("Location") != "" || !strings.Contains(body, "This form was already submitted") {
						t.Errorf("replayed as %s: %s, Location %q, want 403 already submitted\n%s", again, r.Status, r.Header.Get("Location"), body)
					}
				}
				want := before
				if first == "approve" {
					want++
				}
				if n := count(t, db, "paper_accounts"); n != want {
					t.Errorf("%d accounts, want %d", n, want)
				}
			})
		}
		t.Run("concurrent", func(t *testing.T) {
			before := count(t, db, "paper_accounts")
			resp, page := e.browser(t).get(e.authURL("s"))
			f := parseForm(t, page)
			c := resp.Cookies()[0]
			f.Fields.Set("decision", "approve")
			statuses := make(chan int, 4)
			for range cap(statuses) {
				go func() {
					req := formRequest(e.srv.URL+f.Action, f.Fields, c)
					r, err := http.DefaultTransport.RoundTrip(req)
					if err != nil {
						statuses <- 0
						return
					}
					r.Body.Close()
					statuses <- r.StatusCode
				}()
			}
			got := map[int]int{}
			for range cap(statuses) {
				got[<-statuses]++
			}
			if got[http.StatusSeeOther] != 1 || got[http.StatusForbidden] != cap(statuses)-1 {
				t.Errorf("statuses %v, want one 303 and the rest 403", got)
			}
			if n := count(t, db, "paper_accounts"); n != before+1 {
				t.Errorf("%d accounts opened, want 1", n-before)
			}
		})
	})
}

// key returns a SigningKey of 32 bytes, all b.
func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// formRequest returns a form POST to u carrying the cookie c, unless c's
// Name is empty.
func formRequest(u string, form url.Values, c *http.Cookie) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.Name != "" {
		req.AddCookie(c)
	}
	return req
}

// postRaw posts form to path (the form's action) with the cookie c alone,
// and returns the response, not followed, and its body.
func (e *env) postRaw(t *testing.T, path string, form url.Values, c *http.Cookie) (*http.Response, string) {
	t.Helper()
	r, err := http.DefaultTransport.RoundTrip(formRequest(e.srv.URL+path, form, c))
	if err != nil {
		t.Fatal(err)
	}
	return r, readBody(t, r)
}

// TestAuthorizeUntrusted checks that an unknown client or a redirect_uri
// that is not exactly a registered one gets an error page, on the consent
// page and on the decision alike, and is never redirected to.
func TestAuthorizeUntrusted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		edit     func(q url.Values)
		wantText string
	}{
		{"unknown client", func(q url.Values) { q.Set("client_id", "evil") }, `is not registered with this broker (client_id &#34;evil&#34;)`},
		{"no client", func(q url.Values) { q.Del("client_id") }, "is not registered with this broker"},
		{"client repeated", func(q url.Values) { q.Add("client_id", clientID) }, "repeats the parameter client_id"},
		{"no redirect_uri", func(q url.Values) { q.Del("redirect_uri") }, "redirect_uri is missing"},
		{"another host", func(q url.Values) { q.Set("redirect_uri", "http://evil.example/brokers/callback?from=paper") }, "did not register"},
		{"longer path", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:1/brokers/callback/x?from=paper") }, "did not register"},
		{"another query", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:1/brokers/callback?from=evil") }, "did not register"},
		{"no query", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:1/brokers/callback") }, "did not register"},
		{"another client's", func(q url.Values) { q.Set("redirect_uri", otherRedir) }, "did not register"},
		{"redirect_uri repeated", func(q url.Values) { q.Add("redirect_uri", otherURI) }, "repeats the parameter redirect_uri"},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				br := e.browser(t)
				// A consent page of a valid request gives the CSRF token.
				_, page := br.get(e.authURL("s"))
				valid := parseForm(t, page)

				u, _ := url.Parse(e.authURL("s"))
				q := u.Query()
				tt.edit(q)
				u.RawQuery = q.Encode()
				resp, body := br.get(u.String())
				checkErrorPage(t, "GET", resp, body, http.StatusBadRequest, tt.wantText)

				form := valid.Fields
				tt.edit(form)
				form.Set("decision", "approve")
				resp, body = br.post(e.srv.URL+valid.Action, form)
				checkErrorPage(t, "POST", resp, body, http.StatusBadRequest, tt.wantText)
				if n := count(t, db, "paper_accounts"); n != 0 {
					t.Errorf("%d accounts, want 0", n)
				}
			})
		}
	})
}

func checkErrorPage(t *testing.T, method string, resp *http.Response, body string, status int, text string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("Location") != "" {
		t.Errorf("%s: %s, Location %q, want %d and no redirect", method, resp.Status, resp.Header.Get("Location"), status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("%s: Content-Type %q, want an HTML page", method, ct)
	}
	if !strings.Contains(body, text) || !strings.Contains(body, "<h1>") {
		t.Errorf("%s: the error page lacks %q:\n%s", method, text, body)
	}
}

// TestAuthorizeErrorsRedirect checks the errors that, once the client and
// its redirect_uri are trusted, go back to it (RFC 6749 §4.1.2.1). PKCE
// S256 is required: a request without a challenge, or with the plain
// method (the default when code_challenge_method is absent, RFC 7636
// §4.3), is refused with invalid_request and opens no consent page.
func TestAuthorizeErrorsRedirect(t *testing.T) {
	t.Parallel()
	verifier := oauth2.GenerateVerifier()
	tests := []struct {
		name      string
		set       url.Values // a nil value deletes the parameter
		wantError string
		wantDesc  string // in error_description
	}{
		{"implicit grant", url.Values{"response_type": {"token"}}, "unsupported_response_type", "response_type=code"},
		{"no response_type", url.Values{"response_type": {""}}, "invalid_request", "response_type"},
		{"unknown scope", url.Values{"scope": {"trading admin"}}, "invalid_scope", "admin"},
		{"no PKCE", url.Values{"code_challenge": nil, "code_challenge_method": nil}, "invalid_request", "code_challenge is required"},
		{"plain PKCE", url.Values{"code_challenge": {verifier}, "code_challenge_method": {"plain"}}, "invalid_request", "must be S256"},
		{"PKCE without method (plain)", url.Values{"code_challenge_method": nil}, "invalid_request", "must be S256"},
		{"method without challenge", url.Values{"code_challenge": nil}, "invalid_request", "code_challenge is required"},
		{"empty challenge", url.Values{"code_challenge": {""}}, "invalid_request", "code_challenge is required"},
		{"short challenge", url.Values{"code_challenge": {"abc"}}, "invalid_request", "not an S256 challenge"},
		{"challenge repeated", url.Values{"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier), oauth2.S256ChallengeFromVerifier(verifier)}}, "invalid_request", "code_challenge is repeated"},
		{"state repeated", url.Values{"state": {"s", "t"}}, "invalid_request", "state is repeated"},
		{"login_hint repeated", url.Values{"login_hint": {"a@example.com", "b@example.com"}}, "invalid_request", "login_hint is repeated"},
		{"login_hint too long", url.Values{"login_hint": {strings.Repeat("a", 250) + "@x.io"}}, "invalid_request", "login_hint"},
		{"login_hint not printable", url.Values{"login_hint": {"alice\n@example.com"}}, "invalid_request", "login_hint"},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				u, _ := url.Parse(e.authURL("s"))
				q := u.Query()
				for k, v := range tt.set {
					if v == nil {
						q.Del(k)
					} else {
						q[k] = v
					}
				}
				u.RawQuery = q.Encode()
				resp, _ := e.browser(t).get(u.String())
				if resp.StatusCode != http.StatusSeeOther {
					t.Fatalf("GET: %s, want 303", resp.Status)
				}
				got := redirectQuery(t, resp, redirectURI)
				if got.Get("error") != tt.wantError || got.Get("code") != "" || got.Get("state") != "s" ||
					!strings.Contains(got.Get("error_description"), tt.wantDesc) {
					t.Errorf("redirect query %v, want error=%s, state=s and a description with %q", got, tt.wantError, tt.wantDesc)
				}
			})
		}
	})
}

// TestCodeReuse checks that a code works once, and that presenting it
// again answers invalid_grant and revokes the tokens it gave.
func TestCodeReuse(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		g := e.approve(t)
		tok, err := e.conf.Exchange(e.ctx, g.code, oauth2.VerifierOption(g.verifier))
		if err != nil {
			t.Fatal(err)
		}
		var a alpaca.AccountJSON
		if status := e.get(t, tok.AccessToken, "/v2/account", &a); status != http.StatusOK {
			t.Fatalf("GET /v2/account: %d", status)
		}
		_, err = e.conf.Exchange(e.ctx, g.code, oauth2.VerifierOption(g.verifier))
		if code := oauthErrorCode(err); code != "invalid_grant" {
			t.Fatalf("second exchange: %v, want invalid_grant", err)
		}
		var ej alpaca.ErrorJSON
		if status := e.get(t, tok.AccessToken, "/v2/account", &ej); status != http.StatusUnauthorized || ej != unauthorized {
			t.Errorf("the first access token after the code's reuse: %d %+v, want 401", status, ej)
		}
		if _, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
			t.Errorf("the first refresh token after the code's reuse: %v, want invalid_grant", err)
		}
	})
}

// TestRefreshTokenReuse checks that a rotated refresh token presented
// again answers invalid_grant and revokes the tokens refreshed from it.
func TestRefreshTokenReuse(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		tok, _ := e.connect(t)
		tok2, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if oauthErrorCode(err) != "invalid_grant" {
			t.Fatalf("reusing a rotated refresh token: %v, want invalid_grant", err)
		}
		for _, at := range []string{tok.AccessToken, tok2.AccessToken} {
			var ej alpaca.ErrorJSON
			if status := e.get(t, at, "/v2/account", &ej); status != http.StatusUnauthorized {
				t.Errorf("an access token of the grant after the reuse: %d, want 401", status)
			}
		}
		if _, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok2.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
			t.Errorf("the newest refresh token after the reuse: %v, want invalid_grant", err)
		}
	})
}

// TestRevokedRefreshTokenIsNoReplay checks that a refresh token its
// client revoked (as a disconnect does, while one of the client's own
// requests may still be on its way) answers invalid_grant when presented,
// and is not taken for a leaked token's replay: nothing is logged as one.
func TestRevokedRefreshTokenIsNoReplay(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		var log bytes.Buffer
		e := mustEnv(t, db, paper.Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		tok, _ := e.connect(t)
		tok2, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if err != nil {
			t.Fatal(err)
		}
		e.revoke(t, tok2.RefreshToken)
		if _, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok2.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
			t.Fatalf("refresh with a revoked refresh token: %v, want invalid_grant", err)
		}
		if strings.Contains(log.String(), "presented again") {
			t.Errorf("a revoked refresh token was logged as a replay:\n%s", log.String())
		}
		// The rotated one is still a replay.
		if _, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_grant" {
			t.Fatalf("reusing a rotated refresh token: %v, want invalid_grant", err)
		}
		if !strings.Contains(log.String(), "refresh token was presented again") {
			t.Errorf("a rotated refresh token presented again was not logged as a replay:\n%s", log.String())
		}
	})
}

// TestCodeExpiry checks that a code is good for 10 minutes and no more.
func TestCodeExpiry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		after   time.Duration
		wantErr string
	}{
		{"just in time", portal.CodeTTL - time.Second, ""},
		{"expired", portal.CodeTTL, "invalid_grant"},
		{"long expired", 24 * time.Hour, "invalid_grant"},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.clock.Set(t0)
				g := e.approve(t)
				e.clock.Add(tt.after)
				_, err := e.conf.Exchange(e.ctx, g.code, oauth2.VerifierOption(g.verifier))
				if code := oauthErrorCode(err); code != tt.wantErr || (tt.wantErr == "" && err != nil) {
					t.Errorf("Exchange after %v: %v, want %q", tt.after, err, tt.wantErr)
				}
			})
		}
	})
}

// TestAccessTokenExpiry checks that an access token answers 401 once
// AccessTTL has passed, and that the refresh token still works.
func TestAccessTokenExpiry(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 5 * time.Minute})
		tok, _ := e.connect(t)
		if d := tok.Expiry.Sub(time.Now()); d < 4*time.Minute || d > 5*time.Minute {
			t.Errorf("token expires in %v, want 5 min", d)
		}
		e.clock.Add(5 * time.Minute)
		var ej alpaca.ErrorJSON
		if status := e.get(t, tok.AccessToken, "/v2/account", &ej); status != http.StatusUnauthorized || ej != unauthorized {
			t.Errorf("expired token: %d %+v, want 401", status, ej)
		}
		tok2, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
		if err != nil {
			t.Fatal(err)
		}
		var a alpaca.AccountJSON
		if status := e.get(t, tok2.AccessToken, "/v2/account", &a); status != http.StatusOK {
			t.Errorf("refreshed token: %d, want 200", status)
		}
	})
}

// TestPKCE checks that a code is exchanged only with the verifier of its
// S256 challenge.
func TestPKCE(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		challenge func(right string) oauth2.AuthCodeOption
		verifier  string // "right" for the right one
		wantErr   string
	}{
		{"right verifier", oauth2.S256ChallengeOption, "right", ""},
		{"wrong verifier", oauth2.S256ChallengeOption, oauth2.GenerateVerifier(), "invalid_grant"},
		{"malformed verifier", oauth2.S256ChallengeOption, "short", "invalid_grant"},
		{"no verifier", oauth2.S256ChallengeOption, "", "invalid_grant"},
		{"the challenge is the verifier (plain, labelled S256)", func(right string) oauth2.AuthCodeOption {
			return oauth2.SetAuthURLParam("code_challenge", right)
		}, "right", "invalid_grant"},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				right := oauth2.GenerateVerifier()
				auth := e.conf.AuthCodeURL("s", oauth2.SetAuthURLParam("code_challenge_method", "S256"), tt.challenge(right))
				q := e.consent(t, e.browser(t), auth, "approve")
				var exch []oauth2.AuthCodeOption
				switch tt.verifier {
				case "":
				case "right":
					exch = append(exch, oauth2.VerifierOption(right))
				default:
					exch = append(exch, oauth2.VerifierOption(tt.verifier))
				}
				_, err := e.conf.Exchange(e.ctx, q.Get("code"), exch...)
				if code := oauthErrorCode(err); code != tt.wantErr || (tt.wantErr == "" && err != nil) {
					t.Errorf("Exchange: %v, want %q", err, tt.wantErr)
				}
			})
		}
		t.Run("a code stored without a challenge", func(t *testing.T) {
			// Codes issued before PKCE was required have none: they are
			// refused, with a verifier or without.
			for _, verifier := range []string{"", oauth2.GenerateVerifier()} {
				g := e.approve(t)
				if _, err := db.NewUpdate().TableExpr("paper_grants").Set("code_challenge = ''").Where("code_hash = ?", sha(g.code)).
					Exec(context.Background()); err != nil {
					t.Fatal(err)
				}
				var opts []oauth2.AuthCodeOption
				if verifier != "" {
					opts = append(opts, oauth2.VerifierOption(verifier))
				}
				if _, err := e.conf.Exchange(e.ctx, g.code, opts...); oauthErrorCode(err) != "invalid_grant" {
					t.Errorf("Exchange with verifier %q: %v, want invalid_grant", verifier, err)
				}
			}
		})
	})
}

// sha returns the hex SHA-256 of s, as codes and tokens are stored.
func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestTokenEndpoint checks the token endpoint's answers, raw: RFC 6749's
// JSON, no-store, and the error codes and statuses.
func TestTokenEndpoint(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		exchange := func(g grant) url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "code": {g.code}, "redirect_uri": {redirectURI}, "code_verifier": {g.verifier}}
		}
		with := func(v url.Values, k, val string) url.Values {
			out := url.Values{}
			for kk, vv := range v {
				out[kk] = vv
			}
			if val == "" {
				out.Del(k)
			} else {
				out.Set(k, val)
			}
			return out
		}
		tests := []struct {
			name       string
			user, pass string // Basic credentials, if user is not empty
			form       func(g grant) url.Values
			wantStatus int
			wantError  string // "" for success
		}{
			{"basic", clientID, clientSecret, exchange, 200, ""},
			{"form credentials", "", "", func(g grant) url.Values {
				return with(with(exchange(g), "client_id", clientID), "client_secret", clientSecret)
			}, 200, ""},
			{"wrong secret", clientID, "nope", exchange, 401, "invalid_client"},
			{"unknown client", "evil", clientSecret, exchange, 401, "invalid_client"},
			{"no credentials", "", "", exchange, 401, "invalid_client"},
			{"client_id alone", "", "", func(g grant) url.Values { return with(exchange(g), "client_id", clientID) }, 401, "invalid_client"},
			{"two methods", clientID, clientSecret, func(g grant) url.Values { return with(exchange(g), "client_secret", clientSecret) }, 400, "invalid_request"},
			{"another client", otherID, otherSecret, exchange, 400, "invalid_grant"},
			{"no grant_type", clientID, clientSecret, func(g grant) url.Values { return with(exchange(g), "grant_type", "") }, 400, "invalid_request"},
			{"password grant", clientID, clientSecret, func(g grant) url.Values { return with(exchange(g), "grant_type", "password") }, 400, "unsupported_grant_type"},
			{"no code", clientID, clientSecret, func(g grant) url.Values { return with(exchange(g), "code", "") }, 400, "invalid_request"},
			{"unknown code", clientID, clientSecret, func(g grant) url.Values { return with(exchange(g), "code", "nope") }, 400, "invalid_grant"},
			{"other redirect_uri", clientID, clientSecret, func(g grant) url.Values { return with(exchange(g), "redirect_uri", otherURI) }, 400, "invalid_grant"},
			{"no redirect_uri", clientID, clientSecret, func(g grant) url.Values { return with(exchange(g), "redirect_uri", "") }, 400, "invalid_grant"},
			{"code repeated", clientID, clientSecret, func(g grant) url.Values {
				v := exchange(g)
				v.Add("code", g.code)
				return v
			}, 400, "invalid_request"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				g := e.approve(t)
				resp, body := e.oauthPost(t, "/oauth/token", tt.user, tt.pass, tt.form(g))
				if resp.StatusCode != tt.wantStatus {
					t.Errorf("status %s, want %d\n%s", resp.Status, tt.wantStatus, body)
				}
				if resp.Header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
					t.Errorf("headers %v: want Cache-Control: no-store and JSON", resp.Header)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(body), &m); err != nil {
					t.Fatalf("%v\n%s", err, body)
				}
				if tt.wantError != "" {
					if m["error"] != tt.wantError || m["error_description"] == "" {
						t.Errorf("body %s, want error %s and a description", body, tt.wantError)
					}
					if tt.wantStatus == 401 && resp.Header.Get("WWW-Authenticate") == "" {
						t.Errorf("401 without WWW-Authenticate")
					}
					return
				}
				var keys []string
				for k := range m {
					keys = append(keys, k)
				}
				if diff := cmp.Diff([]string{"access_token", "expires_in", "refresh_token", "scope", "token_type"}, keys, cmpSorted); diff != "" {
					t.Errorf("token response keys (-want +got):\n%s", diff)
				}
				if m["token_type"] != "bearer" || m["expires_in"] != float64(3600) || m["scope"] != "account:write trading" {
					t.Errorf("token response %s", body)
				}
			})
		}
		t.Run("revoke needs the client", func(t *testing.T) {
			tok, _ := e.connect(t)
			resp, _ := e.oauthPost(t, "/oauth/revoke", clientID, "nope", url.Values{"token": {tok.AccessToken}})
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("revoke with a wrong secret: %s, want 401", resp.Status)
			}
			// Another client cannot revoke it: 200, and the token still works.
			resp, _ = e.oauthPost(t, "/oauth/revoke", otherID, otherSecret, url.Values{"token": {tok.AccessToken}})
			var a alpaca.AccountJSON
			if resp.StatusCode != http.StatusOK || e.get(t, tok.AccessToken, "/v2/account", &a) != http.StatusOK {
				t.Errorf("another client's revocation: %s; the token must still work", resp.Status)
			}
		})
	})
}

// cmpSorted compares string slices as sets.
var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

// TestAPIUnauthorized checks the 401 of every API endpoint for a missing
// or malformed bearer token.
func TestAPIUnauthorized(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		tok, _ := e.connect(t)
		for _, path := range []string{"/v2/account", "/v2/positions", "/v2/orders", "/v2/account/portfolio/history"} {
			for _, at := range []string{"", "garbage", strings.Repeat("A", 43), tok.RefreshToken} {
				var ej alpaca.ErrorJSON
				if status := e.get(t, at, path, &ej); status != http.StatusUnauthorized || ej != unauthorized {
					t.Errorf("GET %s with token %.8q: %d %+v, want 401 %+v", path, at, status, ej, unauthorized)
				}
			}
		}
	})
}

// TestNoPlaintextSecrets runs approvals, exchanges, refreshes and fills,
// then checks that no code or token is stored in plain text.
func TestNoPlaintextSecrets(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		var secrets []string
		for range 2 {
			g := e.approve(t)
			secrets = append(secrets, g.code)
			tok, err := e.conf.Exchange(e.ctx, g.code, oauth2.VerifierOption(g.verifier))
			if err != nil {
				t.Fatal(err)
			}
			tok2, err := e.conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			if err != nil {
				t.Fatal(err)
			}
			secrets = append(secrets, tok.AccessToken, tok.RefreshToken, tok2.AccessToken, tok2.RefreshToken)
			var a alpaca.AccountJSON
			e.get(t, tok2.AccessToken, "/v2/account", &a)
			if _, err := e.b.Fill(context.Background(), a.ID, "ACME", brokers.Buy, decimal.RequireFromString("1"), decimal.RequireFromString("10"), time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		g := e.approve(t) // a code never exchanged
		mustHoldNoSecrets(t, db, append(secrets, g.code), nil)
	})
}

// TestCodeRace checks that of two concurrent exchanges of one code, one
// succeeds and the other is invalid_grant and revokes the tokens of the
// first, whichever order the database runs them in.
func TestCodeRace(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		for range 3 {
			g := e.approve(t)
			type result struct {
				tok *oauth2.Token
				err error
			}
			results := make(chan result, 2)
			for range 2 {
				go func() {
					tok, err := e.conf.Exchange(e.ctx, g.code, oauth2.VerifierOption(g.verifier))
					results <- result{tok, err}
				}()
			}
			var won []*oauth2.Token
			for range 2 {
				r := <-results
				switch {
				case r.err == nil:
					won = append(won, r.tok)
				case oauthErrorCode(r.err) != "invalid_grant":
					t.Errorf("Exchange: %v, want success or invalid_grant", r.err)
				}
			}
			if len(won) != 1 {
				t.Fatalf("%d exchanges of one code succeeded, want 1", len(won))
			}
			var ej alpaca.ErrorJSON
			if status := e.get(t, won[0].AccessToken, "/v2/account", &ej); status != http.StatusUnauthorized {
				t.Errorf("the winner's token after the reuse: %d, want 401", status)
			}
		}
	})
}

// TestScopesEnforced checks that an access token does what its scopes
// grant and no more: without trading it reads the account and its orders
// but neither places, replaces nor cancels orders nor closes positions
// (403, Alpaca's 40310000); without account:write it changes no
// configuration; with trading it places.
func TestScopesEnforced(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100.5"})
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
		e.conf.Scopes = []string{"data"}
		readOnly, _ := e.connect(t)
		order := `{"symbol":"ACME","qty":"1","side":"buy","type":"market","time_in_force":"day"}`
		const forbidden = `{"code":40310000,"message":"the access token was not granted the scope trading"}`
		for _, c := range []struct{ method, path, body, want string }{
			{http.MethodPost, "/v2/orders", order, forbidden},
			{http.MethodDelete, "/v2/orders", "", forbidden},
			{http.MethodDelete, "/v2/orders/" + uuid.NewString(), "", forbidden},
			{http.MethodPatch, "/v2/orders/" + uuid.NewString(), `{"qty":"2"}`, forbidden},
			{http.MethodDelete, "/v2/positions", "", forbidden},
			{http.MethodDelete, "/v2/positions/ACME", "", forbidden},
			{http.MethodPatch, "/v2/account/configurations", `{"no_shorting":true}`,
				`{"code":40310000,"message":"the access token was not granted the scope account:write"}`},
		} {
			resp, body := e.call(t, c.method, readOnly.AccessToken, c.path, c.body)
			if resp.StatusCode != http.StatusForbidden || body != c.want {
				t.Errorf("%s %s with scope data: %d %s, want 403 %s", c.method, c.path, resp.StatusCode, body, c.want)
			}
		}
		if n := count(t, db, "paper_orders"); n != 0 {
			t.Errorf("%d orders stored, want none", n)
		}
		var a alpaca.AccountJSON
		if status := e.get(t, readOnly.AccessToken, "/v2/account", &a); status != http.StatusOK {
			t.Errorf("GET /v2/account with scope data: %d, want 200", status)
		}
		e.conf.Scopes = []string{"trading"}
		trader, _ := e.connect(t)
		if resp, body := e.call(t, http.MethodPost, trader.AccessToken, "/v2/orders", order); resp.StatusCode != http.StatusOK {
			t.Errorf("POST /v2/orders with scope trading: %d %s, want 200", resp.StatusCode, body)
		}
	})
}
