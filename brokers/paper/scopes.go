package paper

import (
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Alpaca's OAuth scopes. Every access token reads its account, positions,
// orders and history whatever its scopes; ScopeTrading places, replaces
// and cancels orders and closes positions; ScopeAccountWrite changes the
// account's configurations and asks for sign-in links to its page;
// ScopeData reads market data, of which the paper broker serves none but
// the assets, clock and calendar, open to every token. An API key, the
// account owner's own, holds them all.
const (
	ScopeAccountWrite = "account:write"
	ScopeTrading      = "trading"
	ScopeData         = "data"
)

// hasScope reports whether the space-separated scope list granted holds
// sc.
func hasScope(granted, sc string) bool { return slices.Contains(strings.Fields(granted), sc) }

// errScope is the 403 of an access token without the scope sc.
func errScope(sc string) error {
	return &apiError{http.StatusForbidden, codeForbidden, "the access token was not granted the scope " + sc}
}

// scoped returns the authentication of a route that needs the scope sc
// of an access token: [Broker.authenticate], which takes API keys as they
// are, and for a token a 403 when it was not granted sc.
func (b *Broker) scoped(sc string) func(*http.Request) (account, error) {
	return func(r *http.Request) (account, error) {
		if hasKeyHeaders(r) {
			return b.authenticate(r)
		}
		a, err := b.bearer(r)
		if err != nil {
			return account{}, err
		}
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		t, err := tokenByHash(r.Context(), b.db, HashSecret(tok))
		if err != nil {
			return account{}, err
		}
		if !hasScope(t.Scope, sc) {
			return account{}, errScope(sc)
		}
		return a, nil
	}
}

// bearerWithKeysScope authenticates an OAuth access token granted the
// account:write scope; an API key does not do, so that a key cannot make
// more keys. It answers 401 as [Broker.bearer] does, and 403 with Alpaca's
// code 40310000 for a token without the scope.
func (b *Broker) bearerWithKeysScope(r *http.Request) (account, error) {
	if hasKeyHeaders(r) {
		return account{}, errUnauthorized
	}
	return b.scoped(ScopeAccountWrite)(r)
}

// AccountWriteRoute returns a route of the Alpaca-dialect API for a
// handler mounted beside the broker's (package brokers/paper/portal's
// POST /account/sign-in-links): it authenticates an OAuth access token
// granted [ScopeAccountWrite] (never an API key, so that a key cannot
// make more keys), counts the request against the account's rate limit,
// and hands h the account's id. Errors answer as every route under /v2
// does: 401, 403, 422, 404 or 429 in Alpaca's JSON, anything else 500,
// logged.
func (b *Broker) AccountWriteRoute(h func(w http.ResponseWriter, r *http.Request, accountID uuid.UUID) error) http.Handler {
	return b.apiWith(b.bearerWithKeysScope, func(w http.ResponseWriter, r *http.Request, a account) error {
		return h(w, r, a.ID)
	})
}
