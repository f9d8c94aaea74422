package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// mustDashboardUser stores a pro-plan user with a password.
func mustDashboardUser(tb testing.TB, db bun.IDB, email string, admin bool, password string) {
	tb.Helper()
	ctx := context.Background()
	st := billing.NewStore(db)
	p, err := st.Plan(ctx, "pro")
	if err != nil {
		tb.Fatal(err)
	}
	h, err := billing.HashPassword(password, testPasswords)
	if err != nil {
		tb.Fatal(err)
	}
	u := billing.User{Email: email, Name: "Dash", PlanID: p.ID, IsAdmin: admin, PasswordHash: &h}
	if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
		tb.Fatal(err)
	}
}

// visitor is a browser without JavaScript: cookies kept, redirects not
// followed, so that each answer can be checked.
type visitor struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newVisitor(t *testing.T, base string) *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a GET (form nil) or a form POST and returns the status, the
// headers and the body.
func (v *visitor) do(path string, form url.Values, header ...string) (int, http.Header, string) {
	v.t.Helper()
	var req *http.Request
	if form == nil {
		req, _ = http.NewRequest("GET", v.base+path, nil)
	} else {
		req, _ = http.NewRequest("POST", v.base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := v.c.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	fullKey   = regexp.MustCompile(`tk_[a-z2-7]{40}`)
)

// csrf returns the form token of a page.
func (v *visitor) csrf(body string) string {
	v.t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		v.t.Fatalf("no csrf field in:\n%.400s", body)
	}
	return m[1]
}

// signIn signs in and returns the keys page.
func (v *visitor) signIn(email, password string) string {
	v.t.Helper()
	_, _, page := v.do("/dashboard/sign-in", nil)
	status, h, _ := v.do("/dashboard/sign-in", url.Values{"csrf": {v.csrf(page)}, "email": {email}, "password": {password}})
	if status != http.StatusSeeOther || h.Get("Location") != "/dashboard/usage" {
		v.t.Fatalf("sign in as %s: %d to %q", email, status, h.Get("Location"))
	}
	_, _, keys := v.do("/dashboard/settings/api-keys", nil)
	return keys
}

// TestDashboardKeys is Settings → API keys from sign-in to a deleted key,
// over HTTP on both databases: cookies, CSRF, permissions, and the API
// refusing a key deleted in the dashboard.
func TestDashboardKeys(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		srv := httptest.NewServer(server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler())
		defer srv.Close()
		mustDashboardUser(t, db, "admin@example.com", true, "admin password 1")
		mustDashboardUser(t, db, "user@example.com", false, "user password 12")
		v := newVisitor(t, srv.URL)

		if s, h, _ := v.do("/dashboard/", nil); s != 303 || h.Get("Location") != "/dashboard/sign-in" {
			t.Errorf("dashboard signed out: %d to %q", s, h.Get("Location"))
		}
		s, _, page := v.do("/dashboard/sign-in", nil)
		if s != 200 || !strings.Contains(page, `<label for="password">`) {
			t.Fatalf("sign-in page: %d", s)
		}
		token := v.csrf(page)
		if s, _, _ := v.do("/dashboard/sign-in", url.Values{"email": {"admin@example.com"}, "password": {"admin password 1"}}); s != 403 {
			t.Errorf("sign-in without the form token: %d, want 403", s)
		}
		s, _, page = v.do("/dashboard/sign-in", url.Values{"csrf": {token}, "email": {"admin@example.com"}, "password": {"nope"}})
		if s != 401 || !strings.Contains(page, "Wrong email or password.") || !strings.Contains(page, `value="admin@example.com"`) {
			t.Errorf("wrong password: %d\n%s", s, mainOf(page))
		}
		s, _, page = v.do("/dashboard/sign-in", url.Values{"csrf": {v.csrf(page)}, "email": {""}, "password": {""}})
		if s != 400 || !strings.Contains(page, `id="email-error"`) || !strings.Contains(page, `id="password-error"`) {
			t.Errorf("empty form: %d, want 400 with errors beside both fields", s)
		}
		_, _, page = v.do("/dashboard/sign-in", nil)
		s, h, _ := v.do("/dashboard/sign-in", url.Values{"csrf": {v.csrf(page)}, "email": {"Admin@Example.com"}, "password": {"admin password 1"}})
		cookie := strings.Join(h.Values("Set-Cookie"), "\n")
		if s != 303 || !strings.Contains(cookie, "tk_session=") || !strings.Contains(cookie, "HttpOnly") ||
			!strings.Contains(cookie, "SameSite=Lax") || strings.Contains(cookie, "Secure") {
			t.Fatalf("sign in: %d, cookies:\n%s", s, cookie)
		}
		_, _, page = v.do("/dashboard/settings/api-keys", nil)
		if !strings.Contains(page, "No keys yet.") || !strings.Contains(page, "Create a key") {
			t.Fatalf("keys page of an admin:\n%s", mainOf(page))
		}
		token = v.csrf(page)

		if s, _, _ := v.do("/dashboard/settings/api-keys", url.Values{"name": {"ci"}}); s != 403 {
			t.Errorf("create without the form token: %d, want 403", s)
		}
		if s, _, p := v.do("/dashboard/settings/api-keys", url.Values{"csrf": {token}, "name": {" "}}); s != 400 || !strings.Contains(p, `id="name-error"`) {
			t.Errorf("create without a name: %d", s)
		}
		s, _, page = v.do("/dashboard/settings/api-keys", url.Values{"csrf": {token}, "name": {"ci"}})
		key := fullKey.FindString(page)
		if s != 200 || key == "" || !strings.Contains(page, "shown only this once") {
			t.Fatalf("create: %d, key %q", s, key)
		}
		if _, _, again := v.do("/dashboard/settings/api-keys", nil); strings.Contains(again, key) || !strings.Contains(again, key[:11]) {
			t.Error("the keys page shows the full key again, or not its prefix")
		}
		api := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		if r := get(t, api, "/api/v1/billing/plans", key); r.status != 200 {
			t.Fatalf("the new key against the API: %d", r.status)
		}
		keys, _ := billing.NewStore(db).Keys(context.Background(), mustUserID(t, db, "admin@example.com"))
		s, h, _ = v.do("/dashboard/settings/api-keys/"+keys[0].ID.String()+"/delete", url.Values{"csrf": {token}})
		if s != 303 {
			t.Fatalf("delete: %d", s)
		}
		// The dashboard revokes through the server's authenticator: that
		// server refuses the key at once, whatever it had cached.
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/billing/plans", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 401 {
			t.Errorf("the deleted key against the API: %v, %v; want 401", res.StatusCode, err)
		} else {
			res.Body.Close()
		}

		// Signing out ends the session.
		if s, _, _ := v.do("/dashboard/sign-out", url.Values{"csrf": {token}}); s != 303 {
			t.Errorf("sign out: %d", s)
		}
		if s, h, _ := v.do("/dashboard/settings/api-keys", nil); s != 303 || h.Get("Location") != "/dashboard/sign-in" {
			t.Errorf("after sign-out: %d to %q", s, h.Get("Location"))
		}

		// A user who is no administrator sees the list and cannot create.
		u := newVisitor(t, srv.URL)
		page = u.signIn("user@example.com", "user password 12")
		if strings.Contains(page, "Create a key") || !strings.Contains(page, "Only account administrators") {
			t.Errorf("keys page of a non-administrator:\n%s", mainOf(page))
		}
		if s, _, _ := u.do("/dashboard/settings/api-keys", url.Values{"csrf": {u.csrf(page)}, "name": {"sneaky"}}); s != 403 {
			t.Errorf("a non-administrator creates a key: %d, want 403", s)
		}
	})
}

// TestDashboardSignInThrottleAndTLS checks the throttle on failed
// sign-ins, which locks the (email, address) pair and not the email from
// another address, and the Secure cookie behind a TLS-terminating proxy.
func TestDashboardSignInThrottleAndTLS(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	mustDashboardUser(t, db, "eve@example.com", true, "eve's password!")
	v := newVisitor(t, srv.URL)
	for i := range 6 {
		_, _, page := v.do("/dashboard/sign-in", nil)
		s, h, body := v.do("/dashboard/sign-in", url.Values{"csrf": {v.csrf(page)}, "email": {"eve@example.com"}, "password": {"guess"}})
		want := 401
		if i == 5 {
			want = 429
			if h.Get("Retry-After") == "" || !strings.Contains(body, "Too many failed sign-ins") {
				t.Errorf("throttled answer: Retry-After %q\n%.300s", h.Get("Retry-After"), body)
			}
		}
		if s != want {
			t.Errorf("try %d: %d, want %d", i+1, s, want)
		}
	}
	// Eve, at another address, is not locked out by the failures above.
	const eveAddr = "198.51.100.2:5000"
	if rec := postSignIn(h, eveAddr, "eve@example.com", "guess again"); rec.Code != 401 {
		t.Errorf("a wrong password from another address: %d, want 401", rec.Code)
	}
	if rec := postSignIn(h, eveAddr, "eve@example.com", "eve's password!"); rec.Code != 303 || rec.Header().Get("Location") != "/dashboard/usage" {
		t.Errorf("the right password from another address: %d to %q, want 303 to /dashboard/usage", rec.Code, rec.Header().Get("Location"))
	}
	w := newVisitor(t, srv.URL)
	_, hd, _ := w.do("/dashboard/sign-in", nil, "X-Forwarded-Proto", "https")
	if c := strings.Join(hd.Values("Set-Cookie"), "\n"); !strings.Contains(c, "Secure") {
		t.Errorf("cookie over TLS without Secure: %s", c)
	}
}

// TestDashboardSignInAddressThrottle checks that one address trying
// many emails is throttled for every email, and that other addresses are
// not.
func TestDashboardSignInAddressThrottle(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	mustDashboardUser(t, db, "ada@example.com", true, "ada's password!")
	const sprayer = "[2001:db8:1:2::1]:4000"
	// All but the last failure as the dashboard records them, which
	// would take a password hash each over HTTP.
	limit, st, now := billing.DefaultSignInThrottle().AddressFailures, billing.NewStore(db), time.Now()
	for i := range limit - 1 {
		if err := st.RecordSignInFailure(context.Background(), fmt.Sprintf("user%d@example.com", i), "2001:db8:1:2::/64", now); err != nil {
			t.Fatal(err)
		}
	}
	// The last from another host of the /64, which counts as one address.
	if rec := postSignIn(h, "[2001:db8:1:2::ff]:4000", "someone@example.com", "a guess at it"); rec.Code != 401 {
		t.Fatalf("failure %d: %d, want 401", limit, rec.Code)
	}
	rec := postSignIn(h, sprayer, "ada@example.com", "ada's password!")
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
		t.Errorf("the address past %d failures: %d, Retry-After %q; want 429 with Retry-After", limit, rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := postSignIn(h, "198.51.100.2:5000", "ada@example.com", "ada's password!"); rec.Code != 303 {
		t.Errorf("another address: %d, want 303", rec.Code)
	}
}

// postSignIn posts the sign-in form to h from the client address addr,
// with a form token of its own in the cookie and the form (the double
// submit the sign-in page asks for).
func postSignIn(h http.Handler, addr, email, password string) *httptest.ResponseRecorder {
	const token = "a-form-token-of-the-test"
	form := url.Values{"csrf": {token}, "email": {email}, "password": {password}}
	req := httptest.NewRequest(http.MethodPost, "/dashboard/sign-in", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "tk_csrf", Value: token})
	req.RemoteAddr = addr
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestDashboardAccount covers the rest of the dashboard over HTTP on both
// databases: inviting a member, who sets a password with the link and
// sees the account's keys but may not manage them; the usage page's
// counts; connecting the paper broker through OAuth back to the
// dashboard, syncing, the portfolio and disconnecting; and copy trading
// from the leaderboard to a follow's controls, with errors beside the
// fields.
func TestDashboardAccount(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts := startTrading(t, db)
		leader := mustKey(t, db, "leader@example.com", "pro")
		leaderPF, _ := mustPortfolio(t, ts, leader)
		if r := ts.call(t, "POST", "/api/v1/copy-trading/publish?"+query("portfolioId", leaderPF, "displayName", "Lena Leader", "slug", "lena"), leader); r.status != 200 {
			t.Fatalf("publish: %s", r.raw)
		}
		mustDashboardUser(t, db, "admin@example.com", true, "admin password 1")
		v := newVisitor(t, ts.url)
		v.signIn("admin@example.com", "admin password 1")

		// Members: an invitation, its link used once.
		_, _, page := v.do("/dashboard/settings/members", nil)
		token := v.csrf(page)
		if s, _, p := v.do("/dashboard/settings/members", url.Values{"csrf": {token}, "email": {"leader@example.com"}}); s != 409 || !strings.Contains(p, `id="email-error"`) {
			t.Errorf("inviting a taken email: %d, want 409 with the error beside the field", s)
		}
		s, _, page := v.do("/dashboard/settings/members", url.Values{"csrf": {token}, "email": {"bob@example.com"}, "name": {"Bob"}})
		link := regexp.MustCompile(`http://[^<"]*/dashboard/invite/[A-Za-z0-9_-]{43}`).FindString(page)
		if s != 200 || link == "" || !strings.Contains(page, "invited") {
			t.Fatalf("invite: %d, link %q\n%s", s, link, mainOf(page))
		}
		path := strings.TrimPrefix(link, ts.url)
		b := newVisitor(t, ts.url)
		_, _, page = b.do(path, nil)
		if !strings.Contains(page, "bob@example.com") {
			t.Fatalf("invitation page:\n%s", mainOf(page))
		}
		if s, _, p := b.do(path, url.Values{"csrf": {b.csrf(page)}, "password": {"short"}, "confirm": {"short"}}); s != 400 || !strings.Contains(p, `id="password-error"`) {
			t.Errorf("a short password: %d", s)
		}
		_, _, page = b.do(path, nil)
		if s, _, p := b.do(path, url.Values{"csrf": {b.csrf(page)}, "password": {"bob's password 1"}, "confirm": {"bob's password 2"}}); s != 400 || !strings.Contains(p, `id="confirm-error"`) {
			t.Errorf("passwords that differ: %d", s)
		}
		_, _, page = b.do(path, nil)
		if s, h, _ := b.do(path, url.Values{"csrf": {b.csrf(page)}, "password": {"bob's password 1"}, "confirm": {"bob's password 1"}}); s != 303 || h.Get("Location") != "/dashboard/usage" {
			t.Fatalf("accepting the invitation: %d to %q", s, h.Get("Location"))
		}
		if s, _, _ := newVisitor(t, ts.url).do(path, nil); s != 404 {
			t.Errorf("the invitation link used again: %d, want 404", s)
		}
		adminID := mustUserID(t, db, "admin@example.com")
		adminKey, _, _ := billing.NewStore(db).CreateKey(context.Background(), adminID, "admin's", time.Now())
		_, _, page = b.do("/dashboard/settings/api-keys", nil)
		if !strings.Contains(page, adminKey.Prefix) || !strings.Contains(page, "admin@example.com") || strings.Contains(page, "Create a key") {
			t.Errorf("a member's keys page: want the account's keys and no create form\n%s", mainOf(page))
		}
		if s, _, _ := b.do("/dashboard/settings/members", url.Values{"csrf": {b.csrf(page)}, "email": {"eve@example.com"}}); s != 403 {
			t.Errorf("a member invites: %d, want 403", s)
		}
		if s, _, _ := b.do("/dashboard/settings/api-keys/"+adminKey.ID.String()+"/delete", url.Values{"csrf": {b.csrf(page)}}); s != 403 {
			t.Errorf("a member deletes a key: %d, want 403", s)
		}

		// Usage: the limiter's counts of this minute and day.
		_, full, _ := billing.NewStore(db).CreateKey(context.Background(), adminID, "usage", time.Now())
		for range 3 {
			ts.call(t, "GET", "/api/v1/billing/plans", full)
		}
		_, _, page = v.do("/dashboard/usage", nil)
		if n := strings.Count(page, `<td class="num">3</td>`); n != 2 || !strings.Contains(page, "Pro plan") || !strings.Contains(page, `<td class="num">120</td>`) {
			t.Errorf("usage page: %d cells of 3 requests, want 2 (minute and day)\n%s", n, mainOf(page))
		}

		// Brokers: connect through the paper broker's consent page, back
		// to the dashboard.
		_, _, page = v.do("/dashboard/brokers", nil)
		token = v.csrf(page)
		if s, _, p := v.do("/dashboard/brokers", url.Values{"csrf": {token}, "provider": {"nope"}}); s != 400 || !strings.Contains(p, `id="provider-error"`) {
			t.Errorf("an unknown provider: %d", s)
		}
		s, h, _ := v.do("/dashboard/brokers", url.Values{"csrf": {token}, "provider": {"paper"}})
		if s != 303 || !strings.Contains(h.Get("Location"), "/oauth/authorize") {
			t.Fatalf("connect: %d to %q", s, h.Get("Location"))
		}
		consenter := browser()
		consenter.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
			if strings.HasPrefix(req.URL.Path, "/dashboard/") {
				return http.ErrUseLastResponse
			}
			return nil
		}
		back, _ := decide(t, consenter, h.Get("Location"), "approve")
		if back.Path != "/dashboard/brokers" || back.Query().Get("status") != "active" {
			t.Fatalf("the broker sent the browser to %s", back)
		}
		_, _, page = v.do(back.RequestURI(), nil)
		conn := back.Query().Get("connectionId")
		if !strings.Contains(page, "Connected.") || !strings.Contains(page, "/dashboard/brokers/"+conn) {
			t.Errorf("brokers page after connecting:\n%s", mainOf(page))
		}
		ts.Connections().Wait()
		if s, h, _ := v.do("/dashboard/brokers/"+conn+"/sync", url.Values{"csrf": {token}, "return": {"connection"}}); s != 303 || !strings.HasPrefix(h.Get("Location"), "/dashboard/brokers/"+conn+"?notice=") {
			t.Errorf("sync: %d to %q", s, h.Get("Location"))
		}
		ts.Connections().Wait()
		_, _, page = v.do("/dashboard/brokers/"+conn, nil)
		if !strings.Contains(page, "Cash 100000.00 USD") || strings.Count(page, "completed") < 2 {
			t.Errorf("connection page: want the portfolio's cash and two completed syncs\n%s", mainOf(page))
		}
		if s, _, _ := b.do("/dashboard/brokers/"+conn, nil); s != 404 {
			t.Errorf("another user's connection page: %d, want 404", s)
		}

		// Copy trading: follow from the leaderboard, then the controls.
		_, _, page = v.do("/dashboard/copy-trading", nil)
		lid := regexp.MustCompile(`name="leaderProfileId" value="([^"]+)"`).FindStringSubmatch(page)
		if lid == nil || !strings.Contains(page, "Lena Leader") {
			t.Fatalf("leaderboard:\n%s", mainOf(page))
		}
		if s, _, _ := v.do("/dashboard/copy-trading/follow", url.Values{"csrf": {token}, "leaderProfileId": {lid[1]}}); s != 303 {
			t.Fatalf("follow: %d", s)
		}
		_, _, page = v.do("/dashboard/copy-trading", nil)
		fid := regexp.MustCompile(`action="/dashboard/copy-trading/follows/([0-9a-f-]{36})"`).FindStringSubmatch(page)
		if fid == nil || !strings.Contains(page, "<h3>Lena Leader</h3>") {
			t.Fatalf("following:\n%s", mainOf(page))
		}
		follow := "/dashboard/copy-trading/follows/" + fid[1]
		for _, c := range []struct{ field, value string }{{"allocationPct", "lots"}, {"allocationPct", "150"}, {"scalingPct", "0"}} {
			s, _, p := v.do(follow, url.Values{"csrf": {token}, c.field: {c.value}})
			if s != 400 || !regexp.MustCompile(`id="`+c.field+`-`+fid[1]+`"[^>]*aria-invalid="true"`).MatchString(p) {
				t.Errorf("%s=%s: %d, want 400 with the error beside the field", c.field, c.value, s)
			}
		}
		if s, _, _ := v.do(follow, url.Values{"csrf": {token}, "autoSync": {"on"}, "allocationPct": {"25"}, "connectionId": {conn}}); s != 303 {
			t.Errorf("saving the controls: %d", s)
		}
		// The connection is disconnected below: auto-sync needs an active one.
		if s, _, _ := v.do("/dashboard/brokers/"+conn+"/disconnect", url.Values{"csrf": {token}}); s != 303 {
			t.Errorf("disconnect: %d", s)
		}
		_, _, page = v.do("/dashboard/brokers", nil)
		if !strings.Contains(page, "disconnected") {
			t.Errorf("brokers page after disconnecting:\n%s", mainOf(page))
		}
		if s, _, _ := v.do(follow+"/unfollow", url.Values{"csrf": {token}}); s != 303 {
			t.Errorf("unfollow: %d", s)
		}
		if _, _, page = v.do("/dashboard/copy-trading", nil); !strings.Contains(page, "You follow nobody yet") {
			t.Errorf("after unfollowing:\n%s", mainOf(page))
		}
		if s, _, _ := v.do(follow, url.Values{"allocationPct": {"10"}}); s != 403 {
			t.Errorf("a follow's form without the form token: %d, want 403", s)
		}
	})
}

func mustUserID(tb testing.TB, db bun.IDB, email string) uuid.UUID {
	tb.Helper()
	u, err := billing.NewStore(db).UserByEmail(context.Background(), email)
	if err != nil {
		tb.Fatal(err)
	}
	return u.ID
}

// mainOf returns a page's main element, for failure messages.
func mainOf(page string) string {
	if i := strings.Index(page, "<main>"); i >= 0 {
		page = page[i:]
	}
	if len(page) > 3000 {
		page = page[:3000] + "…"
	}
	return page
}
