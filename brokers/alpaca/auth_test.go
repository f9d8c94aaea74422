package alpaca_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/internal/testkit"
)

// broker is an httptest server with Alpaca's token endpoint at
// /oauth/token and GET /v2/account, which accepts only the access token
// "new-access" that a refresh of "old-refresh" issues. It logs what
// happens, in order, with the client's OnToken calls.
type broker struct {
	*httptest.Server

	// tokenStatus and tokenBody, if set, are the token endpoint's answer
	// instead of a new token.
	tokenStatus int
	tokenBody   string
	tokenDelay  time.Duration

	mu        sync.Mutex
	log       []string
	forms     []url.Values // the token requests' forms
	basicAuth []string     // the token requests' "user:password"
}

func mustBroker(tb testing.TB, configure func(*broker)) *broker {
	tb.Helper()
	b := &broker{}
	if configure != nil {
		configure(b)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			tb.Errorf("token request: %v", err)
		}
		user, pass, _ := r.BasicAuth()
		b.mu.Lock()
		b.log = append(b.log, "refresh "+r.PostForm.Get("refresh_token"))
		b.forms = append(b.forms, r.PostForm)
		b.basicAuth = append(b.basicAuth, user+":"+pass)
		b.mu.Unlock()
		time.Sleep(b.tokenDelay) // a slow token endpoint, not a wait
		w.Header().Set("Content-Type", "application/json")
		if b.tokenStatus != 0 {
			w.WriteHeader(b.tokenStatus)
			fmt.Fprint(w, b.tokenBody)
			return
		}
		if r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("refresh_token") != "old-refresh" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"unknown refresh token"}`)
			return
		}
		fmt.Fprint(w, `{"access_token":"new-access","token_type":"bearer","refresh_token":"new-refresh","expires_in":3600,"scope":"account:write trading"}`)
	})
	mux.HandleFunc("GET /v2/account", func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		b.mu.Lock()
		b.log = append(b.log, "GET "+tok)
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if tok != "new-access" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"code":40110000,"message":"request is not authorized"}`)
			return
		}
		fmt.Fprint(w, accountBody)
	})
	b.Server = httptest.NewServer(mux)
	tb.Cleanup(b.Close)
	return b
}

// events returns the log so far.
func (b *broker) events() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.log...)
}

// client returns a client of b with tok whose OnToken logs the token and
// then returns onToken's error, if onToken is not nil.
func (b *broker) client(tok *oauth2.Token, onToken func() error) *alpaca.Client {
	conf := alpaca.OAuthConfig("client-id", "client-secret", b.URL+"/oauth/authorize", b.URL+"/oauth/token", "https://tradekit.example/callback")
	return alpaca.New(alpaca.Config{
		HTTPClient: ownClient(),
		BaseURL:    b.URL,
		OAuth:      conf,
		Token:      tok,
		OnToken: func(ctx context.Context, t *oauth2.Token) error {
			b.mu.Lock()
			b.log = append(b.log, "save "+t.AccessToken+" "+t.RefreshToken)
			b.mu.Unlock()
			if onToken != nil {
				return onToken()
			}
			return nil
		},
	})
}

func TestRefreshOn401(t *testing.T) {
	t.Parallel()
	b := mustBroker(t, nil)
	c := b.client(&oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh", Expiry: time.Now().Add(time.Hour)}, nil)
	for range 2 {
		if _, err := c.Account(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"GET old-access",              // refused
		"refresh old-refresh",         // one refresh
		"save new-access new-refresh", // OnToken, before the token is used
		"GET new-access",              // the retry
		"GET new-access",              // the second call: no refresh
	}
	if diff := cmp.Diff(want, b.events()); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	wantForm := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"old-refresh"}}
	if diff := cmp.Diff(wantForm, b.forms[0]); diff != "" {
		t.Errorf("refresh form mismatch (-want +got):\n%s", diff)
	}
	if b.basicAuth[0] != "client-id:client-secret" {
		t.Errorf("refresh authenticated as %q, want client-id:client-secret in HTTP Basic", b.basicAuth[0])
	}
}

func TestRefreshBeforeCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		expires time.Duration // from now
	}{
		{"expired", -time.Minute},
		{"expires within 10 s", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustBroker(t, nil)
			c := b.client(&oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh", Expiry: time.Now().Add(tt.expires)}, nil)
			if _, err := c.Account(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := []string{"refresh old-refresh", "save new-access new-refresh", "GET new-access"}
			if diff := cmp.Diff(want, b.events()); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefreshFails(t *testing.T) {
	t.Parallel()
	expired := time.Now().Add(-time.Minute)
	later := time.Now().Add(time.Hour)
	tests := []struct {
		name        string
		tok         *oauth2.Token
		tokenStatus int
		tokenBody   string
		wantErr     error
		wantEvents  []string // of the first call
		wantMsg     string
	}{
		{"invalid_grant", &oauth2.Token{AccessToken: "old-access", RefreshToken: "revoked", Expiry: expired}, 0, "",
			tradekit.ErrUnauthorized, []string{"refresh revoked"},
			"alpaca: refreshing the token: unauthorized: invalid_grant: unknown refresh token"},
		{"invalid_grant after a 401", &oauth2.Token{AccessToken: "old-access", RefreshToken: "revoked", Expiry: later}, 0, "",
			tradekit.ErrUnauthorized, []string{"GET old-access", "refresh revoked"},
			"alpaca: refreshing the token: unauthorized: invalid_grant: unknown refresh token"},
		{"expired, no refresh token", &oauth2.Token{AccessToken: "old-access", Expiry: expired}, 0, "",
			tradekit.ErrUnauthorized, nil,
			"alpaca: the access token has expired and there is no refresh token: unauthorized"},
		{"401, no refresh token", &oauth2.Token{AccessToken: "old-access"}, 0, "",
			tradekit.ErrUnauthorized, []string{"GET old-access"},
			"alpaca: 401 40110000: request is not authorized"},
		{"token endpoint down", &oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh", Expiry: expired},
			http.StatusServiceUnavailable, "<html><body>503 Service Unavailable</body></html>",
			tradekit.ErrUnavailable, []string{"refresh old-refresh"},
			"alpaca: refreshing the token: unavailable: 503 Service Unavailable"},
		{"client refused", &oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh", Expiry: expired},
			http.StatusUnauthorized, `{"error":"invalid_client"}`,
			tradekit.ErrUnavailable, []string{"refresh old-refresh"},
			"alpaca: refreshing the token: unavailable: invalid_client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustBroker(t, func(b *broker) { b.tokenStatus, b.tokenBody = tt.tokenStatus, tt.tokenBody })
			c := b.client(tt.tok, nil)
			_, err := c.Account(context.Background())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Account() error = %v, want one wrapping %v", err, tt.wantErr)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("Account() error = %q, want %q", err, tt.wantMsg)
			}
			if diff := cmp.Diff(tt.wantEvents, b.events()); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Once the token endpoint has refused the refresh token, the client does
// not ask it again.
func TestRefreshRefusedOnce(t *testing.T) {
	t.Parallel()
	b := mustBroker(t, nil)
	c := b.client(&oauth2.Token{AccessToken: "old-access", RefreshToken: "revoked", Expiry: time.Now().Add(-time.Minute)}, nil)
	for range 3 {
		if _, err := c.Account(context.Background()); !errors.Is(err, tradekit.ErrUnauthorized) {
			t.Fatalf("Account() error = %v, want one wrapping ErrUnauthorized", err)
		}
	}
	if diff := cmp.Diff([]string{"refresh revoked"}, b.events()); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// Concurrent calls that find the token expired, or see it refused,
// refresh it once. Run with -race.
func TestConcurrentRefresh(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		expires time.Duration // from now
	}{
		{"expired", -time.Minute},
		{"refused", time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustBroker(t, func(b *broker) { b.tokenDelay = 50 * time.Millisecond })
			c := b.client(&oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh", Expiry: time.Now().Add(tt.expires)}, nil)
			const n = 16
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := c.Account(context.Background())
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			counts := map[string]int{}
			for _, e := range b.events() {
				if e != "GET old-access" { // refused; how many depends on timing
					counts[e]++
				}
			}
			want := map[string]int{"refresh old-refresh": 1, "save new-access new-refresh": 1, "GET new-access": n}
			if diff := cmp.Diff(want, counts); diff != "" {
				t.Errorf("event counts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A refreshed token that OnToken fails to save is not used; the next
// call offers it to OnToken again rather than refresh again (the refresh
// may have rotated the refresh token).
func TestOnTokenFails(t *testing.T) {
	t.Parallel()
	b := mustBroker(t, nil)
	errSave := errors.New("database is locked")
	fail := true
	c := b.client(&oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh", Expiry: time.Now().Add(-time.Minute)},
		func() error {
			if fail {
				fail = false
				return errSave
			}
			return nil
		})
	if _, err := c.Account(context.Background()); !errors.Is(err, errSave) {
		t.Fatalf("first Account() error = %v, want one wrapping %v", err, errSave)
	}
	if _, err := c.Account(context.Background()); err != nil {
		t.Fatalf("second Account(): %v", err)
	}
	want := []string{
		"refresh old-refresh",
		"save new-access new-refresh", // fails
		"save new-access new-refresh", // again, and succeeds
		"GET new-access",
	}
	if diff := cmp.Diff(want, b.events()); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// A static token (no OAuth configuration) is never refreshed.
func TestStaticToken(t *testing.T) {
	t.Parallel()
	b := mustBroker(t, nil)
	c := alpaca.New(alpaca.Config{HTTPClient: ownClient(), BaseURL: b.URL, Token: &oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh", Expiry: time.Now().Add(-time.Minute)}})
	_, err := c.Account(context.Background())
	var apiErr *alpaca.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || !errors.Is(err, tradekit.ErrUnauthorized) {
		t.Fatalf("Account() error = %v, want the API's 401", err)
	}
	if diff := cmp.Diff([]string{"GET old-access"}, b.events()); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// A call whose context ends while another call refreshes gives up.
func TestRefreshWaitCancelled(t *testing.T) {
	t.Parallel()
	b := mustBroker(t, func(b *broker) { b.tokenDelay = 200 * time.Millisecond })
	c := b.client(&oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh", Expiry: time.Now().Add(-time.Minute)}, nil)
	done := make(chan error, 1)
	go func() {
		_, err := c.Account(context.Background())
		done <- err
	}()
	testkit.Eventually(t, 10*time.Second, func() bool { return len(b.events()) > 0 }, "the first call to refresh")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Account(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Account() error = %v, want one wrapping context.DeadlineExceeded", err)
	}
	if err := <-done; err != nil {
		t.Errorf("the refreshing call: %v", err)
	}
}
