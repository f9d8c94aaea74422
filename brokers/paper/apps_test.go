package paper_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestApps registers a third-party app in the database, connects a paper
// account through the whole OAuth flow as that app (PKCE S256, the
// consent page naming it), drives the account with Alpaca's SDK, and
// checks that a wrong secret is refused and that deleting the app
// revokes its tokens.
func TestApps(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := mustEnv(t, db, paper.Config{})
		app, secret, err := portal.CreateApp(ctx, db, "Third Party Bot", []string{redirectURI}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if apps, err := portal.Apps(ctx, db); err != nil || len(apps) != 1 || apps[0].ClientID != app.ClientID || apps[0].Name != "Third Party Bot" {
			t.Fatalf("Apps: %+v, %v", apps, err)
		}
		conf := *e.conf
		conf.ClientID, conf.ClientSecret = app.ClientID, secret
		verifier := oauth2.GenerateVerifier()
		br := e.browser(t)
		resp, page := br.get(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
		if resp.StatusCode != http.StatusOK || !strings.Contains(page, "Third Party Bot") {
			t.Fatalf("the consent page for the app: %s\n%s", resp.Status, page)
		}
		q := e.consent(t, br, conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)), "approve")
		bad := conf
		bad.ClientSecret = secret + "x"
		if _, err := bad.Exchange(e.ctx, q.Get("code"), oauth2.VerifierOption(verifier)); oauthErrorCode(err) != "invalid_client" {
			t.Errorf("a wrong secret: %v, want invalid_client", err)
		}
		tok, err := conf.Exchange(e.ctx, q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		c := sdk.NewClient(sdk.ClientOpts{OAuth: tok.AccessToken, BaseURL: e.srv.URL + "/paper", HTTPClient: e.srv.Client(), RetryLimit: 1})
		if a, err := c.GetAccount(); err != nil || !a.Cash.Equal(d("100000")) {
			t.Fatalf("GetAccount as the app: %+v, %v", a, err)
		}
		if err := portal.DeleteApp(ctx, db, app.ClientID, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetAccount(); !isStatus(err, http.StatusUnauthorized) {
			t.Errorf("GetAccount after the app was deleted: %v, want 401", err)
		}
		if _, err := conf.TokenSource(e.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); oauthErrorCode(err) != "invalid_client" {
			t.Errorf("refreshing after the app was deleted: %v, want invalid_client", err)
		}
		if err := portal.DeleteApp(ctx, db, app.ClientID, t0); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("deleting it again: %v", err)
		}
		for _, uris := range [][]string{nil, {"/relative"}, {"https://a.example/cb#f"}} {
			if _, _, err := portal.CreateApp(ctx, db, "x", uris, t0); !errors.Is(err, tradekit.ErrInvalid) {
				t.Errorf("CreateApp(%q): %v, want ErrInvalid", uris, err)
			}
		}
	})
}
