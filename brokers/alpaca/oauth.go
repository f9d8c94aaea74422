package alpaca

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
)

// Alpaca's own endpoints, as its OAuth and Trading API documentation
// gives them. Tradekit's paper broker serves the same paths under its
// own base URL.
const (
	// AuthorizeURL is where a user is sent to authorise an application.
	AuthorizeURL = "https://app.alpaca.markets/oauth/authorize"
	// TokenURL is where an application exchanges a code for a token.
	TokenURL = "https://api.alpaca.markets/oauth/token"
	// LiveURL is the base URL of the trading API for live accounts.
	LiveURL = "https://api.alpaca.markets"
	// PaperURL is the base URL of the trading API for Alpaca's paper
	// accounts.
	PaperURL = "https://paper-api.alpaca.markets"
)

// OAuthConfig returns the OAuth 2.0 configuration of an application
// registered at Alpaca ([AuthorizeURL], [TokenURL]) or at Tradekit's
// paper broker. The client authenticates at the token endpoint with
// HTTP Basic (oauth2.AuthStyleInHeader), which RFC 6749 section 2.3.1
// requires every authorisation server to accept and the paper broker
// accepts; Alpaca's reference shows client_id and client_secret in the
// form instead. Use it to build the authorisation URL (AuthCodeURL), to
// exchange the code (Exchange), and as [Config.OAuth] to refresh tokens.
func OAuthConfig(clientID, clientSecret, authorizeURL, tokenURL, redirectURL string, scopes ...string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   authorizeURL,
			TokenURL:  tokenURL,
			AuthStyle: oauth2.AuthStyleInHeader,
		},
		RedirectURL: redirectURL,
		Scopes:      scopes,
	}
}

// Revoke revokes token at revokeURL as RFC 7009 describes: a POST of the
// form token=<token>&token_type_hint=refresh_token, authenticated with
// HTTP Basic as clientID and clientSecret (each form-encoded first, as
// RFC 6749 section 2.3.1 and golang.org/x/oauth2 do). Revoking the
// refresh token ends the grant; a server that finds no refresh token by
// that value looks for an access token, so an application that holds
// only an access token passes that. A nil hc means a client with a 30 s
// timeout.
//
// Revoke returns nil when the server answers 200, which RFC 7009 also
// gives for a token that was already invalid. It returns an
// [*APIError] for any other status, an error wrapping
// [tradekit.ErrUnavailable] when the server cannot be reached, and one
// wrapping [tradekit.ErrInvalid] when revokeURL is not an absolute http
// or https URL or token is empty.
func Revoke(ctx context.Context, hc *http.Client, revokeURL, clientID, clientSecret, token string) error {
	if u, err := url.Parse(revokeURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("alpaca: revocation URL %s is not an absolute http or https URL: %w", tradekit.Quote(revokeURL), tradekit.ErrInvalid)
	}
	if token == "" {
		return fmt.Errorf("alpaca: no token to revoke: %w", tradekit.ErrInvalid)
	}
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	form := url.Values{"token": {token}, "token_type_hint": {"refresh_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, revokeURL, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("alpaca: revoking the token: %w: %w", tradekit.ErrInvalid, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(clientSecret))
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("alpaca: revoking the token: %w: %w", tradekit.ErrUnavailable, err)
	}
	if resp.StatusCode != http.StatusOK {
		return readAPIError(resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody)) // let the connection be reused
	resp.Body.Close()
	return nil
}
