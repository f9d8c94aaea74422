package connect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/seal"
	"github.com/tradekit/tradekit/marketdata"
)

// fakeAuth answers the paper provider's OAuth endpoints (token and
// revocation) and its trading API's account, in process: a code "good"
// is worth the token at-good (refresh rt-good), a refresh is worth at-new
// (rt-new), anything else is refused. It records every request.
type fakeAuth struct {
	mu       sync.Mutex
	requests []authRequest
	revoke   int // the revocation endpoint's status; 200 when 0
}

// authRequest is a request fakeAuth received.
type authRequest struct {
	Method, Path string
	Form         url.Values
	Auth         string // the Authorization header
}

func (a *fakeAuth) client() *http.Client {
	return &http.Client{Transport: roundTripFunc(a.roundTrip)}
}

func (a *fakeAuth) roundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	form, _ := url.ParseQuery(string(body))
	a.mu.Lock()
	a.requests = append(a.requests, authRequest{r.Method, r.URL.Path, form, r.Header.Get("Authorization")})
	revoke := a.revoke
	a.mu.Unlock()
	answer := func(status int, body string) (*http.Response, error) {
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
	switch {
	case r.URL.Path == "/oauth/token" && form.Get("grant_type") == "authorization_code" && form.Get("code") == "good":
		return answer(200, `{"access_token":"at-good","refresh_token":"rt-good","token_type":"bearer","expires_in":3600}`)
	case r.URL.Path == "/oauth/token" && form.Get("grant_type") == "refresh_token":
		return answer(200, `{"access_token":"at-new","refresh_token":"rt-new","token_type":"bearer","expires_in":3600}`)
	case r.URL.Path == "/oauth/token":
		return answer(400, `{"error":"invalid_grant"}`)
	case r.URL.Path == "/oauth/revoke":
		if revoke == 0 {
			revoke = 200
		}
		return answer(revoke, `{}`)
	case r.URL.Path == "/api/v2/account":
		return answer(200, `{"id":"acct-9","account_number":"PA0009","status":"ACTIVE","currency":"USD","cash":"1000","equity":"1000"}`)
	}
	return answer(503, `{"message":"unavailable"}`)
}

// received returns the requests received at path.
func (a *fakeAuth) received(path string) []authRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []authRequest
	for _, r := range a.requests {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// withAuth returns the Config change that sends HTTP to a, with the
// paper provider's revocation endpoint.
func withAuth(a *fakeAuth) func(*Config) {
	return func(c *Config) {
		p := paper
		p.RevokeURL = "https://broker.example/oauth/revoke"
		c.Providers = []Provider{p}
		c.HTTPClient = a.client()
		c.Unavailable = map[string]string{"alpaca": "set TRADEKIT_ALPACA_CLIENT_ID and TRADEKIT_ALPACA_CLIENT_SECRET"}
	}
}

// mustConnect starts a connection of the user and returns it with the
// state of its authorization URL.
func mustConnect(t *testing.T, s *Service, user uuid.UUID) (Connection, string) {
	t.Helper()
	c, authURL, err := s.Connect(context.Background(), user, "paper", "https://app.example/after?tab=brokers")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return c, u.Query().Get("state")
}

func TestConnect(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()

		t.Run("Authorized", func(t *testing.T) {
			e, auth := newEnv(t, db), &fakeAuth{}
			s := e.service(t, withAuth(auth))
			user := e.mustUser(t)
			c, authURL, err := s.Connect(ctx, user, "paper", "https://app.example/after?tab=brokers")
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != Pending || c.UserID != user || c.Provider != "paper" || c.AccessToken != nil {
				t.Errorf("connection: %+v", c)
			}
			u, err := url.Parse(authURL)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			state := q.Get("state")
			if u.Host != "broker.example" || u.Path != "/oauth/authorize" || q.Get("client_id") != "client-1" || q.Get("response_type") != "code" ||
				q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != paper.OAuth.RedirectURL || q.Get("scope") != "trading" || len(state) != 43 {
				t.Errorf("authorization URL %s", authURL)
			}
			// The state is stored as its hash, with the verifier sealed.
			var st oauthState
			if err := db.NewSelect().Model(&st).Where("state_hash = ?", hashToken(state)).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			verifier, err := e.sealer.Open(st.CodeVerifier, "verifier:"+c.ID.String())
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(verifier))
			if q.Get("code_challenge") != base64.RawURLEncoding.EncodeToString(sum[:]) || !st.ExpiresAt.Equal(start.Add(10*time.Minute)) {
				t.Errorf("the challenge is not the verifier's, or the state expires at %v", st.ExpiresAt)
			}

			to, err := s.Callback(ctx, state, "good", "", "")
			if err != nil {
				t.Fatal(err)
			}
			want := "https://app.example/after?connectionId=" + c.ID.String() + "&status=active&tab=brokers"
			if to != want {
				t.Errorf("Callback = %s, want %s", to, want)
			}
			exchange := auth.received("/oauth/token")
			if len(exchange) != 1 || exchange[0].Form.Get("code") != "good" || exchange[0].Form.Get("code_verifier") != verifier {
				t.Errorf("token requests: %+v", exchange)
			}
			s.Wait() // the first sync
			got, err := NewStore(db).Connection(ctx, user, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != Active || got.AccountID != "acct-1" || got.AccountName != "PA0001" || got.LastError != "" || got.TokenExpiry == nil ||
				got.SyncStatus != Completed {
				t.Errorf("connection after the callback: %+v", got)
			}
			tok, err := openTokens(e.sealer, &got)
			if err != nil {
				t.Fatal(err)
			}
			if tok.AccessToken != "at-good" || tok.RefreshToken != "rt-good" || strings.Contains(*got.AccessToken, "at-good") {
				t.Errorf("stored tokens open to %q, %q (sealed %q)", tok.AccessToken, tok.RefreshToken, *got.AccessToken)
			}
			if _, err := NewStore(db).PortfolioOf(ctx, c.ID); err != nil {
				t.Errorf("no portfolio after the first sync: %v", err)
			}
			// A state works once.
			if _, err := s.Callback(ctx, state, "good", "", ""); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("a replayed state: %v, want ErrNotFound", err)
			}
			if _, err := s.Callback(ctx, "unknown", "good", "", ""); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("an unknown state: %v, want ErrNotFound", err)
			}
			var pe *tradekit.ParamError
			if _, err := s.Callback(ctx, "", "good", "", ""); !errors.As(err, &pe) || pe.Param != "state" {
				t.Errorf("no state: %v, want a ParamError for state", err)
			}
		})

		t.Run("LoginHint", func(t *testing.T) {
			// The paper broker's consent page names the user through
			// login_hint; other providers are not sent the email.
			e := newEnv(t, db)
			hinted := paper
			hinted.SendLoginHint = true
			emails := func(c *Config) {
				c.Providers = []Provider{hinted, {Name: "alpaca", OAuth: paper.OAuth, APIURL: paper.APIURL}}
				c.UserEmail = func(_ context.Context, id uuid.UUID) (string, error) {
					if id == uuid.Nil {
						return "", errDown
					}
					return "user-" + id.String()[:8] + "@example.com", nil
				}
			}
			s := e.service(t, emails)
			user := e.mustUser(t)
			for _, tt := range []struct{ provider, want string }{
				{"paper", "user-" + user.String()[:8] + "@example.com"},
				{"alpaca", ""},
			} {
				_, authURL, err := s.Connect(ctx, user, tt.provider, "https://app.example/")
				if err != nil {
					t.Fatal(err)
				}
				u, _ := url.Parse(authURL)
				q := u.Query()
				if got, ok := q["login_hint"]; tt.want == "" && ok || tt.want != "" && (len(got) != 1 || got[0] != tt.want) {
					t.Errorf("%s: login_hint %q, want %q", tt.provider, got, tt.want)
				}
				if q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 {
					t.Errorf("%s: no S256 challenge in %s", tt.provider, authURL)
				}
			}
			if _, _, err := s.Connect(ctx, uuid.Nil, "paper", "https://app.example/"); !errors.Is(err, errDown) {
				t.Errorf("Connect when the email cannot be read: %v, want %v", err, errDown)
			}
		})

		for _, tt := range []struct {
			name            string
			code, errCode   string
			before          func(t *testing.T, e *env, s *Service, c Connection)
			other           func(*Config) // the Config of the service that takes the callback
			wantStatus, msg string
		}{
			{name: "Denied", errCode: "access_denied", wantStatus: Pending, msg: "the broker did not authorize the connection: access_denied"},
			{name: "NoCode", wantStatus: Pending, msg: "the broker sent no authorization code"},
			{name: "CodeRefused", code: "bad", wantStatus: Pending, msg: "the broker refused the authorization code"},
			{name: "Expired", code: "good", before: func(_ *testing.T, e *env, _ *Service, _ Connection) { e.clock.Add(11 * time.Minute) },
				wantStatus: Pending, msg: "the authorization took longer than 10m0s; connect again"},
			{name: "AccountUnreadable", code: "good", before: func(_ *testing.T, e *env, _ *Service, _ Connection) {
				e.broker.set(func(b *fakeBroker) { b.Before = failOn("Account", -1, errDown) })
			}, wantStatus: Pending, msg: "the broker's account could not be read"},
			{name: "LimitReachedMeanwhile", code: "good", before: func(t *testing.T, e *env, _ *Service, c Connection) {
				e.limit.Store(1)
				e.mustConnection(t, c.UserID)
			}, wantStatus: Pending, msg: "your plan's portfolio limit is reached"},
			{name: "NoLongerPending", code: "good", before: func(t *testing.T, _ *env, s *Service, c Connection) {
				if _, err := s.Disconnect(context.Background(), c.UserID, c.ID); err != nil {
					t.Fatal(err)
				}
			}, wantStatus: Disconnected, msg: "the connection is disconnected"},
			{name: "ProviderGone", code: "good", other: func(c *Config) {
				c.Providers = []Provider{{Name: "other", OAuth: paper.OAuth}}
			}, wantStatus: Pending, msg: "the provider is no longer configured on this server"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				e, auth := newEnv(t, db), &fakeAuth{}
				s := e.service(t, withAuth(auth))
				user := e.mustUser(t)
				c, state := mustConnect(t, s, user)
				if tt.before != nil {
					tt.before(t, e, s, c)
				}
				if tt.other != nil {
					s = e.service(t, withAuth(auth), tt.other)
				}
				to, err := s.Callback(ctx, state, tt.code, tt.errCode, "the user said no")
				if err != nil {
					t.Fatal(err)
				}
				u, err := url.Parse(to)
				if err != nil {
					t.Fatal(err)
				}
				q := u.Query()
				if q.Get("connectionId") != c.ID.String() || q.Get("status") != tt.wantStatus || q.Get("error") != tt.msg || q.Get("tab") != "brokers" {
					t.Errorf("Callback = %s; want status %s and error %q", to, tt.wantStatus, tt.msg)
				}
				got, err := NewStore(db).Connection(ctx, user, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tt.wantStatus || got.LastError != tt.msg || got.AccessToken != nil {
					t.Errorf("connection: %s %q, token %v", got.Status, got.LastError, got.AccessToken)
				}
			})
		}

		t.Run("Refused", func(t *testing.T) {
			e, auth := newEnv(t, db), &fakeAuth{}
			s := e.service(t, withAuth(auth))
			noSealer := e.service(t, withAuth(auth), func(c *Config) { c.Sealer = nil })
			user := e.mustUser(t)
			for _, tt := range []struct {
				name, provider, redirect string
				s                        *Service
				limit                    int64
				wantErr                  error
				wantParam, wantMsg       string
			}{
				{"UnknownProvider", "nope", "https://app.example/", s, 3, tradekit.ErrInvalid, "provider", `unknown provider "nope"; this server accepts [paper]`},
				{"UnconfiguredProvider", "alpaca", "https://app.example/", s, 3, tradekit.ErrInvalid, "provider",
					"alpaca is not configured on this server: set TRADEKIT_ALPACA_CLIENT_ID and TRADEKIT_ALPACA_CLIENT_SECRET"},
				{"NoRedirect", "paper", "", s, 3, tradekit.ErrInvalid, "redirectUrl", ""},
				{"RelativeRedirect", "paper", "/after", s, 3, tradekit.ErrInvalid, "redirectUrl", ""},
				{"FTPRedirect", "paper", "ftp://app.example/", s, 3, tradekit.ErrInvalid, "redirectUrl", ""},
				{"RedirectWithCredentials", "paper", "https://me:pw@app.example/", s, 3, tradekit.ErrInvalid, "redirectUrl", ""},
				{"LongRedirect", "paper", "https://app.example/" + strings.Repeat("a", 2048), s, 3, tradekit.ErrInvalid, "redirectUrl", ""},
				{"NoSealer", "paper", "https://app.example/", noSealer, 3, tradekit.ErrUnavailable, "", ""},
				{"PortfolioLimit", "paper", "https://app.example/", s, 0, tradekit.ErrForbidden, "", ""},
			} {
				t.Run(tt.name, func(t *testing.T) {
					e.limit.Store(tt.limit)
					_, _, err := tt.s.Connect(ctx, user, tt.provider, tt.redirect)
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("Connect = %v, want %v", err, tt.wantErr)
					}
					var pe *tradekit.ParamError
					if tt.wantParam != "" && (!errors.As(err, &pe) || pe.Param != tt.wantParam || tt.wantMsg != "" && pe.Msg != tt.wantMsg) {
						t.Errorf("Connect = %v, want a ParamError for %s %q", err, tt.wantParam, tt.wantMsg)
					}
				})
			}
			var te *tradekit.Error
			e.limit.Store(0)
			if _, _, err := s.Connect(ctx, user, "paper", "https://app.example/"); !errors.As(err, &te) || te.Details["limit"] != "portfolios" {
				t.Errorf("the limit's error: %v, want details limit=portfolios", err)
			}
			conns, err := NewStore(db).Connections(ctx, user)
			if err != nil || len(conns) != 0 {
				t.Errorf("refused connections stored: %d, %v", len(conns), err)
			}
			if diff := cmp.Diff([]string{"paper"}, s.Providers()); diff != "" {
				t.Errorf("Providers() (-want +got):\n%s", diff)
			}
		})

		t.Run("PlanLimitUnknown", func(t *testing.T) {
			e := newEnv(t, db)
			boom := errors.New("billing down")
			s := e.service(t, func(c *Config) {
				c.PortfolioLimit = func(context.Context, uuid.UUID) (int, error) { return 0, boom }
			})
			if _, _, err := s.Connect(ctx, e.mustUser(t), "paper", "https://app.example/"); !errors.Is(err, boom) {
				t.Errorf("Connect = %v, want the limit's error", err)
			}
		})

		t.Run("Disconnect", func(t *testing.T) { testDisconnect(t, db) })

		t.Run("AlpacaDialect", func(t *testing.T) { testAlpacaDialect(t, db) })
	})
}

func testDisconnect(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	for _, tt := range []struct {
		name         string
		revoke       int    // the revocation endpoint's status
		revokeURL    bool   // the provider has one
		wantRevoked  string // the tokens revoked, in order
		wantRequests int
	}{
		{"Revoked", 200, true, "rt at", 2},
		{"RevocationFails", 500, true, "rt at", 2},
		{"NoRevocation", 200, false, "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, auth := newEnv(t, db), &fakeAuth{revoke: tt.revoke}
			s := e.service(t, withAuth(auth), func(c *Config) {
				if !tt.revokeURL {
					c.Providers = []Provider{paper}
				}
			})
			user := e.mustUser(t)
			c := e.mustConnection(t, user)
			got, err := s.Disconnect(ctx, user, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != Disconnected || got.AccessToken != nil || got.RefreshToken != nil || got.TokenExpiry != nil {
				t.Errorf("Disconnect = %+v", got)
			}
			stored, err := NewStore(db).Connection(ctx, user, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != Disconnected || stored.AccessToken != nil || stored.RefreshToken != nil {
				t.Errorf("stored: %s, tokens %v %v", stored.Status, stored.AccessToken, stored.RefreshToken)
			}
			var revoked []string
			for _, r := range auth.received("/oauth/revoke") {
				revoked = append(revoked, strings.SplitN(r.Form.Get("token"), "-", 2)[0])
				if r.Auth == "" || r.Form.Get("token_type_hint") != "refresh_token" {
					t.Errorf("revocation without client authentication or hint: %+v", r)
				}
			}
			if strings.Join(revoked, " ") != tt.wantRevoked {
				t.Errorf("revoked %v, want %s", revoked, tt.wantRevoked)
			}
			// Disconnecting again changes nothing and revokes nothing.
			again, err := s.Disconnect(ctx, user, c.ID)
			if err != nil || again.Status != Disconnected || !again.UpdatedAt.Equal(got.UpdatedAt) {
				t.Errorf("Disconnect again = %s updated %v, %v", again.Status, again.UpdatedAt, err)
			}
			if n := len(auth.received("/oauth/revoke")); n != tt.wantRequests {
				t.Errorf("%d revocations, want %d", n, tt.wantRequests)
			}
			if _, err := s.Disconnect(ctx, e.mustUser(t), c.ID); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("Disconnect of another user's connection = %v, want ErrNotFound", err)
			}
		})
	}
}

// TestAlpacaDialect runs a sync without Config.Trader, through Alpaca's
// dialect over the test's round tripper: the connection's expired token
// is refreshed, and the new one is sealed and stored before it is used.
func testAlpacaDialect(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	e, auth := newEnv(t, db), &fakeAuth{}
	s := e.service(t, withAuth(auth), func(c *Config) { c.Trader = nil })
	user := e.mustUser(t)
	c := e.mustConnection(t, user)
	expired := time.Now().Add(-time.Hour).UTC()
	c.TokenExpiry = &expired
	if err := NewStore(db).updateConnection(ctx, &c, "token_expiry"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartSync(ctx, user, c.ID); err != nil {
		t.Fatal(err)
	}
	s.Wait()
	// The account is read with the new token; the positions are
	// unavailable, so the sync fails, after the token was stored.
	account := auth.received("/api/v2/account")
	if len(account) == 0 || account[0].Auth != "Bearer at-new" {
		t.Errorf("account requests: %+v", account)
	}
	refresh := auth.received("/oauth/token")
	if len(refresh) != 1 || refresh[0].Form.Get("refresh_token") != "rt-"+c.ID.String() {
		t.Errorf("token requests: %+v", refresh)
	}
	got, err := NewStore(db).Connection(ctx, user, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := openTokens(e.sealer, &got)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "at-new" || tok.RefreshToken != "rt-new" || !tok.Expiry.After(time.Now()) {
		t.Errorf("stored token: %q, %q, expiring %v", tok.AccessToken, tok.RefreshToken, tok.Expiry)
	}
	if got.SyncStatus != Failed || got.LastError != "the broker could not be reached or failed; the next sync will try again" {
		t.Errorf("sync: %s %q", got.SyncStatus, got.LastError)
	}
}

// TestTraderOf reaches the broker of connections that cannot reach one.
func testTraderOf(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	f := newFixture(t, db)
	other, err := NewSealer(bytes.Repeat([]byte{9}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	gone := f.mustConnection(t, f.user)
	gone.Provider = "gone"
	foreign := f.mustConnection(t, f.user)
	sealTokens(other, &foreign, &oauth2.Token{AccessToken: "at", RefreshToken: "rt"})
	noRefresh := f.mustConnection(t, f.user)
	sealTokens(f.sealer, &noRefresh, &oauth2.Token{AccessToken: "at-only", Expiry: start.Add(time.Hour)})
	for _, c := range []*Connection{&gone, &foreign, &noRefresh} {
		if err := NewStore(db).updateConnection(ctx, c, "provider", "access_token", "refresh_token", "token_expiry"); err != nil {
			t.Fatal(err)
		}
	}
	noSealer := f.service(t, func(c *Config) { c.Sealer = nil })
	for _, tt := range []struct {
		name    string
		s       *Service
		c       Connection
		wantErr error
	}{
		{"UnknownProvider", f.s, gone, tradekit.ErrUnavailable},
		{"OtherKey", f.s, foreign, seal.ErrOpen},
		{"NoSealer", noSealer, f.conn, tradekit.ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.s.PlaceOrder(ctx, f.user, marketOrder(tt.c, f.acme, brokers.Buy, "1")); !errors.Is(err, tt.wantErr) {
				t.Errorf("PlaceOrder = %v, want %v", err, tt.wantErr)
			}
		})
	}
	// A token without a refresh token opens without one.
	if _, err := f.s.PlaceOrder(ctx, f.user, limitOrder(noRefresh, f.acme, brokers.Buy, "1", "100")); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	last := f.tokens[len(f.tokens)-1]
	f.mu.Unlock()
	if last.AccessToken != "at-only" || last.RefreshToken != "" || !last.Expiry.Equal(start.Add(time.Hour)) {
		t.Errorf("the broker was given %+v", last)
	}
}

// TestStore reads back what the store keeps, and never another user's.
func TestStore(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		st := NewStore(db)
		other := f.mustUser(t)
		f.clock.Add(time.Second)
		second := f.mustConnection(t, f.user)
		pf1 := f.mustLedger(t, f.s, f.conn)
		f.broker.set(func(b *fakeBroker) {
			b.positions["ACME"] = &brokers.Position{Symbol: "ACME", Quantity: dec("3"), AvgEntryPrice: dec("95")}
		})
		f.clock.Add(time.Second)
		pf2 := f.mustLedger(t, f.s, second)

		t.Run("Connections", func(t *testing.T) {
			list, err := st.Connections(ctx, f.user)
			if err != nil || len(list) != 2 || list[0].ID != f.conn.ID || list[1].ID != second.ID {
				t.Errorf("Connections = %d, %v; want the two, oldest first", len(list), err)
			}
			if list, err := st.Connections(ctx, other); err != nil || list == nil || len(list) != 0 {
				t.Errorf("Connections(other) = %v, %v; want an empty list", list, err)
			}
			if n, err := st.CountActive(ctx, f.user); err != nil || n != 2 {
				t.Errorf("CountActive = %d, %v; want 2", n, err)
			}
			if _, err := st.Connection(ctx, other, f.conn.ID); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("Connection(other) = %v, want ErrNotFound", err)
			}
			if _, err := st.Logs(ctx, other, f.conn.ID); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("Logs(other) = %v, want ErrNotFound", err)
			}
			if logs, err := st.Logs(ctx, f.user, f.conn.ID); err != nil || logs == nil || len(logs) != 0 {
				t.Errorf("Logs = %v, %v; want an empty list", logs, err)
			}
		})

		t.Run("Portfolios", func(t *testing.T) {
			list, err := st.Portfolios(ctx, f.user)
			if err != nil || len(list) != 2 || list[0].ID != pf1.ID || list[1].ID != pf2.ID {
				t.Fatalf("Portfolios = %d, %v; want the two, oldest first", len(list), err)
			}
			if len(list[0].Positions) != 0 || len(list[1].Positions) != 1 || !list[1].Positions[0].Quantity.Equal(dec("3")) {
				t.Errorf("positions: %+v, %+v", list[0].Positions, list[1].Positions)
			}
			if list, err := st.Portfolios(ctx, other); err != nil || len(list) != 0 {
				t.Errorf("Portfolios(other) = %v, %v", list, err)
			}
			for name, get := range map[string]func() (Portfolio, error){
				"Portfolio":     func() (Portfolio, error) { return st.Portfolio(ctx, f.user, pf2.ID) },
				"PortfolioByID": func() (Portfolio, error) { return st.PortfolioByID(ctx, pf2.ID) },
				"PortfolioOf":   func() (Portfolio, error) { return st.PortfolioOf(ctx, second.ID) },
			} {
				p, err := get()
				if err != nil || p.ID != pf2.ID || len(p.Positions) != 1 {
					t.Errorf("%s = %v with %d positions, %v", name, p.ID, len(p.Positions), err)
				}
			}
			for name, call := range map[string]func() error{
				"Portfolio(other)":       func() error { _, err := st.Portfolio(ctx, other, pf1.ID); return err },
				"PortfolioByID(unknown)": func() error { _, err := st.PortfolioByID(ctx, uuid.New()); return err },
				"PortfolioOf(unknown)":   func() error { _, err := st.PortfolioOf(ctx, uuid.New()); return err },
				"History(other)":         func() error { _, err := st.History(ctx, other, pf1.ID); return err },
			} {
				if err := call(); !errors.Is(err, tradekit.ErrNotFound) {
					t.Errorf("%s = %v, want ErrNotFound", name, err)
				}
			}
			h, err := st.History(ctx, f.user, pf1.ID)
			if err != nil || len(h) != 1 || !h[0].Equity.Equal(dec("100000")) {
				t.Errorf("History = %+v, %v; want today's equity", h, err)
			}
		})

		t.Run("Orders", func(t *testing.T) {
			f.mustGuardrails(t, f.user, loose())
			var ids []uuid.UUID
			for _, in := range []OrderInput{
				limitOrder(f.conn, f.acme, brokers.Buy, "1", "90"),
				limitOrder(f.conn, f.acme, brokers.Sell, "1", "110"),
				limitOrder(f.conn, f.acme, brokers.Buy, "2", "91"),
			} {
				f.clock.Add(time.Second)
				ids = append(ids, mustPlace(t, f.s, f.user, in).Order.ID)
			}
			if _, err := f.s.CancelOrder(ctx, f.user, ids[2]); err != nil {
				t.Fatal(err)
			}
			idsOf := func(list []Order) []uuid.UUID {
				out := []uuid.UUID{}
				for _, o := range list {
					out = append(out, o.ID)
				}
				return out
			}
			for _, tt := range []struct {
				name      string
				filter    OrderFilter
				want      []uuid.UUID
				wantTotal int
			}{
				{"All", OrderFilter{Page: 1, Limit: 10}, []uuid.UUID{ids[2], ids[1], ids[0]}, 3},
				{"Paged", OrderFilter{Page: 2, Limit: 2}, []uuid.UUID{ids[0]}, 3},
				{"Pending", OrderFilter{Status: brokers.Pending, Page: 1, Limit: 10}, []uuid.UUID{ids[1], ids[0]}, 2},
				{"Buys", OrderFilter{Side: brokers.Buy, Page: 1, Limit: 10}, []uuid.UUID{ids[2], ids[0]}, 2},
				{"PendingSells", OrderFilter{Status: brokers.Pending, Side: brokers.Sell, Page: 1, Limit: 1}, []uuid.UUID{ids[1]}, 1},
			} {
				t.Run(tt.name, func(t *testing.T) {
					list, total, err := st.Orders(ctx, f.user, tt.filter)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(tt.want, idsOf(list)); diff != "" || total != tt.wantTotal {
						t.Errorf("Orders() total %d, want %d; ids (-want +got):\n%s", total, tt.wantTotal, diff)
					}
				})
			}
			if list, total, err := st.Orders(ctx, other, OrderFilter{Page: 1, Limit: 10}); err != nil || total != 0 || list == nil {
				t.Errorf("Orders(other) = %v, %d, %v; want an empty list", list, total, err)
			}
			if o, err := st.Order(ctx, f.user, ids[0]); err != nil || o.ID != ids[0] {
				t.Errorf("Order = %v, %v", o.ID, err)
			}
			if _, err := st.Order(ctx, other, ids[0]); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("Order(other) = %v, want ErrNotFound", err)
			}
			if q, err := st.OpenQuantity(ctx, f.conn.ID, "ACME", brokers.Buy); err != nil || !q.Equal(dec("1")) {
				t.Errorf("OpenQuantity(buy) = %s, %v; want 1", q, err)
			}
		})

		t.Run("Guardrails", func(t *testing.T) {
			g, at, err := st.Guardrails(ctx, other)
			if err != nil || at != nil {
				t.Fatalf("Guardrails of a user who set none = %v, %v", at, err)
			}
			if diff := cmp.Diff(brokers.DefaultGuardrails(), g); diff != "" {
				t.Errorf("default guardrails (-want +got):\n%s", diff)
			}
			for i, want := range []brokers.Guardrails{
				{MaxDailyTrades: 5, MaxPositionSizePct: dec("12.5"), MaxPortfolioRiskPct: dec("2"), StopLossRequired: true, AllowedAssetTypes: []string{"etf", "stock"}},
				{MaxDailyTrades: 1, MaxPositionSizePct: dec("100"), MaxPortfolioRiskPct: dec("0.25"), AllowedAssetTypes: []string{}},
			} {
				set := start.Add(time.Duration(i) * time.Hour)
				if err := st.SaveGuardrails(ctx, other, want, set); err != nil {
					t.Fatal(err)
				}
				got, at, err := st.Guardrails(ctx, other)
				if err != nil || at == nil || !at.Equal(set) {
					t.Fatalf("Guardrails = %v, %v; want set at %v", at, err, set)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("guardrails %d (-saved +read):\n%s", i, diff)
				}
			}
		})

		t.Run("Value", func(t *testing.T) { testValue(t, db) })

		t.Run("TraderOf", func(t *testing.T) { testTraderOf(t, db) })
	})
}

func testValue(t *testing.T, db *bun.DB) {
	e := newEnv(t, db)
	acme := e.mustAsset(t, "ACME", "100", 3)
	nopx := e.mustAsset(t, "NOPX", "1", 0)
	bv := dec("60")
	p := Portfolio{Cash: dec("1000"), Positions: []Position{
		{Symbol: "ACME", AssetID: &acme.ID, Quantity: dec("10"), AverageCost: dec("90"), BrokerValue: decp("950")},
		{Symbol: "ZZZZ", Quantity: dec("5"), AverageCost: dec("10"), BrokerValue: &bv},
		{Symbol: "NOPX", AssetID: &nopx.ID, Quantity: dec("2"), AverageCost: dec("3")},
	}}
	got, equity, err := Value(context.Background(), marketdata.NewStore(db), p)
	if err != nil {
		t.Fatal(err)
	}
	type valued struct {
		Symbol, Price, Value, PnL string
		Date                      calendar.Date
	}
	var rows []valued
	for _, v := range got {
		rows = append(rows, valued{v.Symbol, v.Price.String(), v.MarketValue.String(), v.UnrealizedPnL.String(), v.PriceDate})
	}
	want := []valued{
		{"ACME", "100", "1000", "100", calendar.DateOf(start).AddDays(-1)},
		{"ZZZZ", "0", "60", "10", calendar.Date{}},
		{"NOPX", "0", "0", "-6", calendar.Date{}},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Value() (-want +got):\n%s", diff)
	}
	// 1,000 + 1,000 + 60 + 0
	if !equity.Equal(dec("2060")) {
		t.Errorf("equity %s, want 2060", equity)
	}
}

func TestWithQuery(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		kv   []string
		want string
	}{
		{"https://a.example/x?b=1", []string{"a", "2"}, "https://a.example/x?a=2&b=1"},
		{"https://a.example/", []string{"error", "a b&c"}, "https://a.example/?error=a+b%26c"},
		{"https://a.example/", []string{"odd"}, "https://a.example/"},
		{"%zz", []string{"a", "1"}, "%zz"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			if got := withQuery(tt.in, tt.kv...); got != tt.want {
				t.Errorf("withQuery(%q, %q) = %q, want %q", tt.in, tt.kv, got, tt.want)
			}
		})
	}
}

func TestRandomToken(t *testing.T) {
	t.Parallel()
	a, b := randomToken(), randomToken()
	if len(a) != 43 || a == b {
		t.Errorf("randomToken() = %q, %q: want 43 characters, each new", a, b)
	}
	if h := hashToken("x"); h != "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Errorf("hashToken(x) = %s", h)
	}
}
