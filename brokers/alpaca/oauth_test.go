package alpaca_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

func TestOAuthConfig(t *testing.T) {
	t.Parallel()
	var gotAuth, gotForm string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		user, pass, _ := r.BasicAuth()
		gotAuth, gotForm = user+":"+pass, r.PostForm.Encode()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"79500537-5796-4230-9661-7f7108877c60","token_type":"bearer","scope":"account:write trading"}`)
	}))
	defer s.Close()

	conf := alpaca.OAuthConfig("client-id", "client-secret", alpaca.AuthorizeURL, s.URL+"/oauth/token",
		"https://tradekit.example/callback", "account:write", "trading")

	u, err := url.Parse(conf.AuthCodeURL("random-state"))
	if err != nil {
		t.Fatal(err)
	}
	wantQuery := url.Values{
		"response_type": {"code"},
		"client_id":     {"client-id"},
		"redirect_uri":  {"https://tradekit.example/callback"},
		"scope":         {"account:write trading"},
		"state":         {"random-state"},
	}
	if diff := cmp.Diff(wantQuery, u.Query()); diff != "" {
		t.Errorf("AuthCodeURL query mismatch (-want +got):\n%s", diff)
	}
	if got := u.Scheme + "://" + u.Host + u.Path; got != "https://app.alpaca.markets/oauth/authorize" {
		t.Errorf("AuthCodeURL goes to %s", got)
	}

	tok, err := conf.Exchange(context.Background(), "the-code")
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "79500537-5796-4230-9661-7f7108877c60" {
		t.Errorf("Exchange() access token = %q", tok.AccessToken)
	}
	if gotAuth != "client-id:client-secret" {
		t.Errorf("token request authenticated as %q, want client-id:client-secret in HTTP Basic", gotAuth)
	}
	wantForm := url.Values{"grant_type": {"authorization_code"}, "code": {"the-code"},
		"redirect_uri": {"https://tradekit.example/callback"}}.Encode()
	if gotForm != wantForm {
		t.Errorf("token request form = %s, want %s (no client secret in the body)", gotForm, wantForm)
	}
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	// A secret with characters that RFC 6749 section 2.3.1 has encoded
	// before they go into HTTP Basic.
	const clientID, secret = "client-id", "s3cr:et/+ 1"
	var got struct {
		method, contentType, user, pass string
		form                            url.Values
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		user, pass, _ := r.BasicAuth()
		got.method, got.contentType, got.form = r.Method, r.Header.Get("Content-Type"), r.PostForm
		got.user, _ = url.QueryUnescape(user)
		got.pass, _ = url.QueryUnescape(pass)
		w.WriteHeader(http.StatusOK)
	}))
	defer s.Close()

	if err := alpaca.Revoke(context.Background(), nil, s.URL+"/oauth/revoke", clientID, secret, "the-refresh-token"); err != nil {
		t.Fatal(err)
	}
	if got.method != http.MethodPost || got.contentType != "application/x-www-form-urlencoded" {
		t.Errorf("request %s %s, want POST application/x-www-form-urlencoded", got.method, got.contentType)
	}
	if got.user != clientID || got.pass != secret {
		t.Errorf("HTTP Basic %q:%q, want %q:%q", got.user, got.pass, clientID, secret)
	}
	wantForm := url.Values{"token": {"the-refresh-token"}, "token_type_hint": {"refresh_token"}}
	if diff := cmp.Diff(wantForm, got.form); diff != "" {
		t.Errorf("form mismatch (-want +got):\n%s", diff)
	}
}

func TestRevokeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr error
		wantMsg string
	}{
		{"bad client", http.StatusUnauthorized, `{"error":"invalid_client","error_description":"client authentication failed"}`,
			tradekit.ErrUnauthorized, "alpaca: 401: invalid_client: client authentication failed"},
		{"unsupported token type", http.StatusBadRequest, `{"error":"unsupported_token_type"}`,
			nil, "alpaca: 400: unsupported_token_type"},
		{"Alpaca's error shape", http.StatusNotFound, `{"code":40410000,"message":"endpoint not found"}`,
			tradekit.ErrNotFound, "alpaca: 404 40410000: endpoint not found"},
		{"down", http.StatusBadGateway, "<html><body>Bad Gateway</body></html>",
			tradekit.ErrUnavailable, `alpaca: 502: Bad Gateway (body is not JSON: "<html><body>Bad Gateway</body></html>")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer s.Close()
			err := alpaca.Revoke(context.Background(), s.Client(), s.URL, "client-id", "client-secret", "tok")
			var apiErr *alpaca.APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status {
				t.Fatalf("Revoke() error = %v, want an APIError with status %d", err, tt.status)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Revoke() error = %v, want one wrapping %v", err, tt.wantErr)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("Revoke() error = %q, want %q", err, tt.wantMsg)
			}
		})
	}

	t.Run("unreachable", func(t *testing.T) {
		s := httptest.NewServer(http.NotFoundHandler())
		s.Close()
		if err := alpaca.Revoke(context.Background(), nil, s.URL, "client-id", "client-secret", "tok"); !errors.Is(err, tradekit.ErrUnavailable) {
			t.Errorf("Revoke() error = %v, want one wrapping ErrUnavailable", err)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		for _, args := range [][2]string{{"/oauth/revoke", "tok"}, {"https://api.alpaca.markets/oauth/revoke", ""}} {
			if err := alpaca.Revoke(context.Background(), nil, args[0], "client-id", "client-secret", args[1]); !errors.Is(err, tradekit.ErrInvalid) {
				t.Errorf("Revoke(%q, token %q) error = %v, want one wrapping ErrInvalid", args[0], args[1], err)
			}
		}
	})
}
