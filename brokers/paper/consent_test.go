package paper_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestConsentNamesUserAndApp checks that the consent page names the
// application by the name it registered, and the user its login_hint
// names, escaped; and that without a login_hint it says it does not know.
func TestConsentNamesUserAndApp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		client    *oauth2.Config // nil: the registered client of the env
		hint      string
		want      []string
		forbidden []string
	}{
		{
			name: "a user",
			hint: "alice@example.com",
			want: []string{
				"<dt>Application</dt>\n  <dd>Tradekit Test</dd>",
				"<dd><strong>alice@example.com</strong> at Tradekit Test: the user Tradekit Test says started this connection. If that is not you, choose Deny.</dd>",
				"A new paper account is opened for Tradekit Test user alice@example.com with 100,000.00 USD of play money.",
				"<legend>Open a paper account with 100,000.00 USD of play money for Tradekit Test user alice@example.com?</legend>",
			},
		},
		{
			name:      "markup in the hint",
			hint:      `<script>alert("x")</script>&<b>`,
			want:      []string{"<strong>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&lt;b&gt;</strong> at Tradekit Test"},
			forbidden: []string{"<script", "<b>"},
		},
		{
			name:      "no hint",
			want:      []string{"<dd>Tradekit Test did not say which of its users started this connection.</dd>"},
			forbidden: []string{"says started this connection", " user "},
		},
		{
			name:   "a client registered without a name",
			client: &oauth2.Config{ClientID: otherID, RedirectURL: otherRedir},
			hint:   "bob@example.com",
			want:   []string{"<dd>other</dd>", "<strong>bob@example.com</strong> at other"},
		},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				conf := e.conf
				if tt.client != nil {
					c := *tt.client
					c.Endpoint = e.conf.Endpoint
					conf = &c
				}
				opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(oauth2.GenerateVerifier())}
				if tt.hint != "" {
					opts = append(opts, oauth2.SetAuthURLParam("login_hint", tt.hint))
				}
				resp, page := e.browser(t).get(conf.AuthCodeURL("s", opts...))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("consent page: %s\n%s", resp.Status, page)
				}
				for _, w := range tt.want {
					if !strings.Contains(page, w) {
						t.Errorf("the consent page lacks %q:\n%s", w, page)
					}
				}
				for _, f := range tt.forbidden {
					if strings.Contains(page, f) {
						t.Errorf("the consent page has %q:\n%s", f, page)
					}
				}
				if got := parseForm(t, page).Fields["login_hint"]; tt.hint != "" && (len(got) != 1 || got[0] != tt.hint) {
					t.Errorf("hidden login_hint %q, want %q", got, tt.hint)
				}
			})
		}
		t.Run("approved with a hint", func(t *testing.T) {
			auth := e.authURL("s", oauth2.SetAuthURLParam("login_hint", "alice@example.com"))
			if q := e.consent(t, e.browser(t), auth, "approve"); q.Get("code") == "" {
				t.Errorf("no code: %v", q)
			}
		})
	})
}

// TestSignupLimit checks that one client address opens at most
// SignupLimit accounts in a UTC hour: the next approval answers 429 with
// Retry-After until the hour ends, opens nothing and leaves its form
// usable; another address, and denials, are not held back.
func TestSignupLimit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		// The test names each browser's address in a header.
		e := mustEnv(t, db, paper.Config{}, portal.Config{SignupLimit: portal.DefaultSignupLimit, ClientAddress: func(r *http.Request) string { return r.Header.Get("X-Test-Address") }})
		show := func(t *testing.T) (url.Values, *http.Cookie, string) {
			t.Helper()
			resp, page := e.browser(t).get(e.authURL("s"))
			f := parseForm(t, page)
			f.Fields.Set("decision", "approve")
			return f.Fields, resp.Cookies()[0], f.Action
		}
		post := func(t *testing.T, addr string, form url.Values, c *http.Cookie, action string) (*http.Response, string) {
			t.Helper()
			req := formRequest(e.srv.URL+action, form, c)
			req.Header.Set("X-Test-Address", addr)
			r, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			return r, readBody(t, r)
		}
		approve := func(t *testing.T, addr string) (*http.Response, string) {
			t.Helper()
			f, c, action := show(t)
			return post(t, addr, f, c, action)
		}

		e.clock.Set(t0) // 15:00 UTC
		for i := range portal.DefaultSignupLimit {
			if r, body := approve(t, "192.0.2.1"); r.StatusCode != http.StatusSeeOther {
				t.Fatalf("sign-up %d: %s, want 303\n%s", i+1, r.Status, body)
			}
		}
		e.clock.Set(t0.Add(30 * time.Minute))
		form, cookie, action := show(t)
		r, body := post(t, "192.0.2.1", form, cookie, action)
		if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "1800" || r.Header.Get("Location") != "" {
			t.Errorf("sign-up 11: %s, Retry-After %q, Location %q; want 429, 1800 (the end of the hour) and no redirect",
				r.Status, r.Header.Get("Retry-After"), r.Header.Get("Location"))
		}
		if !strings.Contains(body, "opened 10 paper accounts this hour") || !strings.Contains(body, "Try again in 30 minutes.") {
			t.Errorf("the 429 page does not say why and when:\n%s", body)
		}
		if n := count(t, db, "paper_accounts"); n != portal.DefaultSignupLimit {
			t.Errorf("%d accounts, want %d", n, portal.DefaultSignupLimit)
		}

		// Another address may sign up; the limited one may still deny.
		if r, body := approve(t, "192.0.2.2"); r.StatusCode != http.StatusSeeOther {
			t.Errorf("another address: %s, want 303\n%s", r.Status, body)
		}
		f, c, a := show(t)
		f.Set("decision", "deny")
		if r, _ := post(t, "192.0.2.1", f, c, a); r.StatusCode != http.StatusSeeOther {
			t.Errorf("a denial from the limited address: %s, want 303", r.Status)
		}

		// At the next hour, the refused form works: the refusal did not use
		// its token up.
		e.clock.Set(t0.Add(time.Hour))
		if r, body := post(t, "192.0.2.1", form, cookie, action); r.StatusCode != http.StatusSeeOther {
			t.Errorf("the refused form at 16:00: %s, want 303\n%s", r.Status, body)
		}

		// Concurrent approvals from one address open exactly the limit.
		const n = 3 * portal.DefaultSignupLimit / 2
		type shown struct {
			form   url.Values
			cookie *http.Cookie
			action string
		}
		forms := make([]shown, n)
		for i := range forms {
			f, c, a := show(t)
			forms[i] = shown{f, c, a}
		}
		statuses := make(chan int, n)
		for _, s := range forms {
			go func() {
				req := formRequest(e.srv.URL+s.action, s.form, s.cookie)
				req.Header.Set("X-Test-Address", "198.51.100.7")
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
		for range n {
			got[<-statuses]++
		}
		if got[http.StatusSeeOther] != portal.DefaultSignupLimit || got[http.StatusTooManyRequests] != n-portal.DefaultSignupLimit {
			t.Errorf("%d concurrent sign-ups from one address: %v, want %d 303 and the rest 429", n, got, portal.DefaultSignupLimit)
		}
	})
}

// TestSignupLimitOff checks that a negative SignupLimit turns the limit
// off.
func TestSignupLimitOff(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{}, portal.Config{SignupLimit: -1})
		for range portal.DefaultSignupLimit + 1 {
			e.approve(t)
		}
		if n := count(t, db, "paper_signups"); n != 0 {
			t.Errorf("%d sign-up counts stored without a limit", n)
		}
	})
}

// TestConsentPurge checks that a decision deletes the used consent tokens
// that have expired and the sign-up counts of past hours, so that neither
// table grows without bound.
func TestConsentPurge(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{}, portal.Config{SignupLimit: portal.DefaultSignupLimit})
		e.clock.Set(t0)
		e.approve(t)
		e.consent(t, e.browser(t), e.authURL("s"), "deny")
		if nonces, signups := count(t, db, "paper_consent_nonces"), count(t, db, "paper_signups"); nonces != 2 || signups != 1 {
			t.Fatalf("after two decisions: %d used tokens and %d sign-up counts, want 2 and 1", nonces, signups)
		}
		e.clock.Set(t0.Add(time.Hour + time.Second)) // both tokens expired, 15:00's count past
		e.approve(t)
		if nonces, signups := count(t, db, "paper_consent_nonces"), count(t, db, "paper_signups"); nonces != 1 || signups != 1 {
			t.Errorf("an hour later: %d used tokens and %d sign-up counts, want 1 and 1 (the new ones)", nonces, signups)
		}
	})
}
