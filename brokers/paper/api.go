package paper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

// Handler returns the broker's Alpaca-dialect API, with paths relative to
// where it is mounted; package brokers/paper/portal's Handler serves the
// OAuth server and the account pages beside it and sends it the rest:
//
//	GET  /v2/account                      Alpaca's account
//	GET  /v2/account/configurations       the account's configurations (fixed)
//	PATCH /v2/account/configurations      accepted when it changes nothing; 422 otherwise
//	GET  /v2/account/activities[/{type}]  trade activities (FILL)
//	GET  /v2/account/portfolio/history    daily equity: period, timeframe=1D, date_end
//	GET  /v2/positions                    open positions
//	DELETE /v2/positions                  close every position (cancel_orders): 207
//	GET  /v2/positions/{symbol}           one position, by symbol or asset id
//	DELETE /v2/positions/{symbol}         close a position, or qty or percentage of it
//	GET  /v2/orders                       orders: status, after, until, direction, limit, side, symbols, nested
//	POST /v2/orders                       place an order (JSON body, Alpaca's)
//	DELETE /v2/orders                     cancel every open order: 207
//	GET  /v2/orders/{id}                  one order
//	PATCH /v2/orders/{id}                 replace an open order
//	DELETE /v2/orders/{id}                cancel an open order: 204, or 422 when it is not open
//	GET  /v2/orders:by_client_order_id    one order, by client_order_id
//	GET  /v2/clock                        NYSE's clock, from Tradekit's exchange calendar
//	GET  /v2/calendar                     NYSE's trading days: start, end
//	GET  /v2/assets                       Tradekit's assets: status, asset_class, exchange
//	GET  /v2/assets/{symbol}              one asset, by symbol or id
//	GET  /v2/events/trades                trade updates (Server-Sent Events): since, until, since_id, until_id
//
// Every route under /v2 takes an OAuth access token (Authorization:
// Bearer) or an API key (the headers APCA-API-KEY-ID and
// APCA-API-SECRET-KEY; see [Broker.CreateAPIKey]). Every other path
// under /v2 answers Alpaca's JSON error: 422 for what Alpaca serves and
// the paper broker does not simulate (watchlists, options contracts,
// corporate actions), 405 for a known path with another method, 404 for
// anything else.
//
// Mount it under its prefix with the prefix stripped, usually through the
// portal:
//
//	mux.Handle("/paper/", http.StripPrefix("/paper", portal.New(db, b, cfg).Handler()))
func (b *Broker) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /v2/account", b.api(b.handleAccount))
	mux.Handle("GET /v2/account/configurations", b.api(b.handleConfigurations))
	mux.Handle("PATCH /v2/account/configurations", b.apiWith(b.scoped(ScopeAccountWrite), b.handleConfigurationsUpdate))
	mux.Handle("GET /v2/account/activities", b.api(b.handleActivities))
	mux.Handle("GET /v2/account/activities/{type}", b.api(b.handleActivities))
	mux.Handle("GET /v2/account/portfolio/history", b.api(b.handleHistory))
	mux.Handle("GET /v2/positions", b.api(b.handlePositions))
	mux.Handle("DELETE /v2/positions", b.apiWith(b.scoped(ScopeTrading), b.handleCloseAll))
	mux.Handle("GET /v2/positions/{symbol}", b.api(b.handlePosition))
	mux.Handle("DELETE /v2/positions/{symbol}", b.apiWith(b.scoped(ScopeTrading), b.handleClose))
	mux.Handle("GET /v2/orders", b.api(b.handleOrders))
	mux.Handle("POST /v2/orders", b.apiWith(b.authenticateLater, b.handlePlace))
	mux.Handle("DELETE /v2/orders", b.apiWith(b.scoped(ScopeTrading), b.handleCancelAll))
	mux.Handle("GET /v2/orders/{id}", b.apiWith(b.authenticateLater, b.handleOrder))
	mux.Handle("PATCH /v2/orders/{id}", b.apiWith(b.scoped(ScopeTrading), b.handleReplace))
	mux.Handle("DELETE /v2/orders/{id}", b.apiWith(b.scoped(ScopeTrading), b.handleCancel))
	mux.Handle("GET /v2/orders:by_client_order_id", b.api(b.handleOrderByClientID))
	mux.Handle("GET /v2/clock", b.api(b.handleClock))
	mux.Handle("GET /v2/calendar", b.api(b.handleCalendar))
	mux.Handle("GET /v2/assets", b.api(b.handleAssets))
	mux.Handle("GET /v2/assets/{symbol}", b.api(b.handleAsset))
	mux.Handle("GET /v2/events/trades", b.api(b.handleTradeEvents))
	for _, p := range []string{"/v2/watchlists", "/v2/watchlists/", "/v2/watchlists:by_name"} {
		mux.Handle(p, b.api(unsimulated("watchlists")))
	}
	mux.Handle("/v2/options/", b.api(unsimulated("options trading")))
	mux.Handle("/v2/corporate_actions/", b.api(unsimulated("corporate actions")))
	mux.Handle("/v2/", b.api(func(w http.ResponseWriter, r *http.Request, _ account) error {
		return unknownRoute(mux, r)
	}))
	return mux
}

// unsimulated returns a handler that answers 422: Alpaca serves what,
// and the paper broker does not simulate it.
func unsimulated(what string) func(http.ResponseWriter, *http.Request, account) error {
	return func(http.ResponseWriter, *http.Request, account) error {
		return notSimulated("%s", what)
	}
}

// unknownRoute returns the error of a request that no route of mux
// serves: 405 when the path has a route with another method, 404
// otherwise, both in Alpaca's JSON.
func unknownRoute(mux *http.ServeMux, r *http.Request) error {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		alt := r.Clone(r.Context())
		alt.Method = m
		if _, pattern := mux.Handler(alt); pattern != "/v2/" && pattern != "" {
			return &apiError{http.StatusMethodNotAllowed, codeMethodNotAllowed, "method not allowed"}
		}
	}
	return &apiError{http.StatusNotFound, codeNotFound, "endpoint not found"}
}

// Alpaca's error codes.
const (
	codeUnauthorized     = 40110000
	codeNotFound         = 40410000
	codeMethodNotAllowed = 40510000
	codeInvalid          = 42210000
	codeInternal         = 50010000
)

// api adapts a handler of the Alpaca-dialect API: it authenticates the
// request (see [Broker.authenticate]) and hands the handler its account.
func (b *Broker) api(h func(http.ResponseWriter, *http.Request, account) error) http.Handler {
	return b.apiWith(b.authenticate, h)
}

// apiWith adapts a handler of the Alpaca-dialect API whose requests auth
// authenticates: errors wrapping [tradekit.ErrUnauthorized] answer 401,
// [tradekit.ErrInvalid] 422 and [tradekit.ErrNotFound] 404, each with
// Alpaca's code, and an *apiError its own status and code; anything else
// answers 500, logged.
func (b *Broker) apiWith(auth func(*http.Request) (account, error), h func(http.ResponseWriter, *http.Request, account) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := auth(r)
		if err == nil {
			err = b.takeRequest(r.Context(), w, a)
		}
		if err == nil {
			err = checkRequestNUL(r)
			if err != nil {
				if _, aerr := b.resolve(r.Context(), a); aerr != nil {
					err = aerr // an invalid token is a 401 whatever the request
				}
			}
		}
		if err == nil {
			err = h(w, r, a)
		}
		if err == nil {
			return
		}
		var e alpaca.ErrorJSON
		var status int
		var ae *apiError
		switch {
		case errors.As(err, &ae):
			status, e = ae.status, alpaca.ErrorJSON{Code: ae.code, Message: ae.msg}
		case errors.Is(err, tradekit.ErrUnauthorized):
			status, e = http.StatusUnauthorized, alpaca.ErrorJSON{Code: codeUnauthorized, Message: "request is not authorized"}
			w.Header().Set("WWW-Authenticate", `Bearer realm="paper"`)
		case errors.Is(err, tradekit.ErrInvalid):
			msg := tradekit.Message(err) // a *tradekit.ParamError's "param: msg", or a *tradekit.Error's
			if msg == "" {
				msg = "invalid request"
			}
			status, e = http.StatusUnprocessableEntity, alpaca.ErrorJSON{Code: codeInvalid, Message: msg}
		case errors.Is(err, tradekit.ErrNotFound):
			status, e = http.StatusNotFound, alpaca.ErrorJSON{Code: codeNotFound, Message: "not found"}
		default:
			b.logError(r, err)
			status, e = http.StatusInternalServerError, alpaca.ErrorJSON{Code: codeInternal, Message: "internal server error"}
		}
		writeJSON(w, status, e)
	})
}

// errUnauthorized answers a request without a valid access token or API
// key.
var errUnauthorized = fmt.Errorf("paper: %w", tradekit.ErrUnauthorized)

// authenticate returns the account of the request's credentials: an API
// key when either of its headers is present (see [Broker.apiKey]), an
// OAuth access token otherwise (see [Broker.bearer]). A request with both
// a key header and an Authorization header is refused, since it is
// unclear which account it means. The error wraps
// [tradekit.ErrUnauthorized] when the credentials are missing or invalid.
func (b *Broker) authenticate(r *http.Request) (account, error) {
	if !hasKeyHeaders(r) {
		return b.bearer(r)
	}
	if r.Header.Get("Authorization") != "" {
		return account{}, errUnauthorized
	}
	return b.apiKey(r)
}

// authenticateLater is [Broker.authenticate] for a handler that reads
// the account itself, with what it reads first: for a well-formed access
// token it returns an account of which only token, the token's hash, is
// set, and reads nothing; the handler resolves it with [lockAccount] or
// [orderWithLegs], or [Broker.resolve] when it fails before.
func (b *Broker) authenticateLater(r *http.Request) (account, error) {
	if hasKeyHeaders(r) {
		return b.authenticate(r)
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || !IsSecret(tok) {
		return account{}, errUnauthorized
	}
	return account{token: HashSecret(tok)}, nil
}

// resolve returns a, read by its access token when
// [Broker.authenticateLater] left it unread; the error wraps
// [tradekit.ErrUnauthorized] for a token that is unknown, expired or
// revoked.
func (b *Broker) resolve(ctx context.Context, a account) (account, error) {
	if a.token == "" {
		return a, nil
	}
	a, err := accountByAccessToken(ctx, b.db, a.token, b.clock())
	if errors.Is(err, tradekit.ErrNotFound) {
		return account{}, errUnauthorized
	}
	return a, err
}

// bearer returns the account of the request's access token (RFC 6750
// §2.1). The error wraps [tradekit.ErrUnauthorized] when the token is
// missing, unknown, not an access token, expired or revoked.
func (b *Broker) bearer(r *http.Request) (account, error) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || !IsSecret(tok) {
		return account{}, errUnauthorized
	}
	a, err := accountByAccessToken(r.Context(), b.db, HashSecret(tok), b.clock())
	if errors.Is(err, tradekit.ErrNotFound) {
		return account{}, errUnauthorized
	}
	return a, err
}

// logError logs an error that answers 500.
func (b *Broker) logError(r *http.Request, err error) {
	b.log.Error("paper: request failed", "method", r.Method, "uri", r.URL.RequestURI(), "error", err)
}

// writeJSON writes v as the JSON body of an API answer.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}
