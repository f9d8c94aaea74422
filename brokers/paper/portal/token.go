package portal

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/paper"
)

// tokenResponse is a successful answer of the token endpoint (RFC 6749
// §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// errReused reports a code or refresh token presented a second time.
var errReused = errors.New("paper: reused")

// handleToken answers POST /oauth/token: the authorization_code and
// refresh_token grants.
func (p *Portal) handleToken(w http.ResponseWriter, r *http.Request) error {
	c, err := p.authenticateClient(w, r)
	if err != nil {
		return err
	}
	f := r.PostForm
	for _, k := range []string{"grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "scope"} {
		if len(f[k]) > 1 {
			return badRequest("invalid_request", "%s is repeated", k)
		}
	}
	switch gt := f.Get("grant_type"); gt {
	case "authorization_code":
		return p.exchangeCode(w, r, c, f)
	case "refresh_token":
		return p.refresh(w, r, c, f)
	case "":
		return badRequest("invalid_request", "grant_type is missing")
	default:
		return badRequest("unsupported_grant_type", "grant_type %s is not supported", tradekit.Quote(gt))
	}
}

// authenticateClient parses the form and authenticates the client by HTTP
// Basic (RFC 6749 §2.3.1, names and secrets form-urlencoded) or by
// client_id and client_secret in the form, never both.
func (p *Portal) authenticateClient(w http.ResponseWriter, r *http.Request) (Client, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return Client{}, badRequest("invalid_request", "the form could not be read")
	}
	f := r.PostForm
	if len(f["client_id"]) > 1 || len(f["client_secret"]) > 1 {
		return Client{}, badRequest("invalid_request", "client_id or client_secret is repeated")
	}
	id, secret := f.Get("client_id"), f.Get("client_secret")
	if user, pass, ok := r.BasicAuth(); ok {
		if secret != "" {
			return Client{}, badRequest("invalid_request", "the client authenticated in two ways")
		}
		u, err1 := url.QueryUnescape(user)
		p, err2 := url.QueryUnescape(pass)
		if err1 != nil || err2 != nil || (id != "" && id != u) {
			return Client{}, errInvalidClient
		}
		id, secret = u, p
	}
	c, ok, err := p.client(r.Context(), id)
	if err != nil {
		return Client{}, err
	}
	if !ok {
		c = Client{Secret: "\x00"} // compare anyway, so that an unknown client takes as long
	}
	if !c.checkSecret(secret) || !ok {
		return Client{}, errInvalidClient
	}
	return c, nil
}

// errInvalidClient answers a failed client authentication.
var errInvalidClient = &oauthError{status: http.StatusUnauthorized, code: "invalid_client", desc: "client authentication failed"}

// exchangeCode redeems an authorization code (RFC 6749 §4.1.3, RFC 7636
// §4.6). A code is single use: presenting it again revokes every token
// issued from it (§4.1.2, §10.5).
func (p *Portal) exchangeCode(w http.ResponseWriter, r *http.Request, c Client, f url.Values) error {
	ctx := r.Context()
	code := f.Get("code")
	if code == "" {
		return badRequest("invalid_request", "code is missing")
	}
	g, err := grantByCode(ctx, p.db, code)
	if errors.Is(err, tradekit.ErrNotFound) {
		return badRequest("invalid_grant", "the code is invalid")
	}
	if err != nil {
		return err
	}
	if g.UsedAt != nil {
		return p.reused(ctx, "code", g.ID, c.ID)
	}
	now := p.clock()
	verifier := f.Get("code_verifier")
	switch {
	case !now.Before(g.ExpiresAt):
		return badRequest("invalid_grant", "the code has expired")
	case g.ClientID != c.ID:
		return badRequest("invalid_grant", "the code was issued to another client")
	case f.Get("redirect_uri") != g.RedirectURI:
		return badRequest("invalid_grant", "redirect_uri differs from the authorization request's")
	case g.CodeChallenge == "":
		return badRequest("invalid_grant", "the code was requested without PKCE, which this broker requires")
	case verifier == "":
		return badRequest("invalid_grant", "code_verifier is missing")
	case !isVerifier(verifier) || subtle.ConstantTimeCompare([]byte(s256(verifier)), []byte(g.CodeChallenge)) != 1:
		return badRequest("invalid_grant", "code_verifier does not match the code_challenge")
	}
	resp, err := p.redeem(ctx, g, c.ID, now)
	if errors.Is(err, errReused) {
		return p.reused(ctx, "code", g.ID, c.ID)
	}
	if err != nil {
		return err
	}
	return writeToken(w, resp)
}

// reused revokes every token of the grant, because its code or one of its
// refresh tokens was presented again: a sign that it leaked.
func (p *Portal) reused(ctx context.Context, what string, grantID uuid.UUID, clientID string) error {
	if err := p.tokens.RevokeGrant(ctx, grantID, p.clock()); err != nil {
		return err
	}
	p.log.Warn("paper: a "+what+" was presented again; its grant's tokens are revoked", "grant", grantID, "client", clientID)
	return badRequest("invalid_grant", "the %s was already used", what)
}

// revokedRefresh answers the exchange of the revoked refresh token t: a
// replay when it was revoked by its own exchange, which revokes every
// token of its grant (see [Portal.reused]); else (its client revoked it,
// as a disconnect does, while one of its requests was on the way) only
// invalid.
func (p *Portal) revokedRefresh(ctx context.Context, t paper.Token, clientID string) error {
	if t.Rotated {
		return p.reused(ctx, "refresh token", t.GrantID, clientID)
	}
	return badRequest("invalid_grant", "the refresh token was revoked")
}

// refresh exchanges a refresh token for new tokens (RFC 6749 §6),
// rotating it: the old refresh token is revoked, and presenting it again
// revokes every token of its grant.
func (p *Portal) refresh(w http.ResponseWriter, r *http.Request, c Client, f url.Values) error {
	ctx := r.Context()
	rt := f.Get("refresh_token")
	if rt == "" {
		return badRequest("invalid_request", "refresh_token is missing")
	}
	t, err := p.tokens.Token(ctx, rt)
	if errors.Is(err, tradekit.ErrNotFound) || (err == nil && (t.Kind != paper.TokenRefresh || t.ClientID != c.ID)) {
		return badRequest("invalid_grant", "the refresh token is invalid")
	}
	if err != nil {
		return err
	}
	if t.RevokedAt != nil {
		return p.revokedRefresh(ctx, t, c.ID)
	}
	scope := t.Scope
	if s := f.Get("scope"); s != "" {
		narrowed, e := normalizeScope(s)
		if e != nil {
			return e
		}
		for _, sc := range strings.Fields(narrowed) {
			if !slices.Contains(strings.Fields(t.Scope), sc) {
				return badRequest("invalid_scope", "scope %s was not granted", tradekit.Quote(sc))
			}
		}
		scope = narrowed
	}
	now := p.clock()
	resp, err := p.rotate(ctx, t, c.ID, scope, now)
	if errors.Is(err, errReused) {
		// Revoked meanwhile: by another exchange of it, or by its client.
		if t, err = p.tokens.Token(ctx, rt); err != nil {
			return err
		}
		return p.revokedRefresh(ctx, t, c.ID)
	}
	if err != nil {
		return err
	}
	return writeToken(w, resp)
}

// issue stores a new access token and a new refresh token of the grant,
// on db, and returns them.
func (p *Portal) issue(ctx context.Context, db bun.IDB, grantID, accountID uuid.UUID, clientID, scope string, now time.Time) (tokenResponse, error) {
	ts, err := paper.NewTokens(db).Issue(ctx, grantID, accountID, clientID, scope, now, p.accessTTL)
	if err != nil {
		return tokenResponse{}, err
	}
	return tokenResponse{
		AccessToken: ts.Access, TokenType: "bearer", ExpiresIn: int64(p.accessTTL / time.Second),
		RefreshToken: ts.Refresh, Scope: scope,
	}, nil
}

// writeToken writes a token response (RFC 6749 §5.1).
func writeToken(w http.ResponseWriter, resp tokenResponse) error {
	return writeOAuthJSON(w, http.StatusOK, resp)
}

// writeOAuthJSON writes v as JSON with the headers RFC 6749 §5.1 asks of
// every answer that may carry a token.
func writeOAuthJSON(w http.ResponseWriter, status int, v any) error {
	h := w.Header()
	h.Set("Content-Type", "application/json;charset=UTF-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// handleRevoke answers POST /oauth/revoke (RFC 7009). The client must
// authenticate. Revoking a refresh token revokes every token of its grant,
// access tokens included (§2.1); revoking an access token revokes it
// alone. An unknown token, or one issued to another client, answers 200
// and changes nothing.
func (p *Portal) handleRevoke(w http.ResponseWriter, r *http.Request) error {
	c, err := p.authenticateClient(w, r)
	if err != nil {
		return err
	}
	f := r.PostForm
	if len(f["token"]) > 1 {
		return badRequest("invalid_request", "token is repeated")
	}
	tok := f.Get("token")
	if tok == "" {
		return badRequest("invalid_request", "token is missing")
	}
	ctx := r.Context()
	t, err := p.tokens.Token(ctx, tok)
	switch {
	case errors.Is(err, tradekit.ErrNotFound):
	case err != nil:
		return err
	case t.ClientID != c.ID:
	case t.Kind == paper.TokenRefresh:
		if err := p.tokens.RevokeGrant(ctx, t.GrantID, p.clock()); err != nil {
			return err
		}
	default:
		if _, err := p.tokens.Revoke(ctx, t.ID, p.clock(), false); err != nil {
			return err
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	return nil
}
