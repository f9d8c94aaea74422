package paper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// Handler returns the broker's HTTP interface, with paths relative to
// where it is mounted (Config.Prefix):
//
//	GET  /oauth/authorize                 the consent page
//	POST /oauth/authorize                 the user's decision
//	POST /oauth/token                     authorization_code and refresh_token grants
//	POST /oauth/revoke                    token revocation (RFC 7009)
//	POST /account/sign-in-links           a sign-in link to the account page (access token with account:write)
//	GET  /account/sign-in                 use a sign-in link: start a session, go to the account page
//	GET  /account                         the account page: its API keys
//	POST /account/keys                    create an API key; the page shows its secret once
//	POST /account/keys/revoke             revoke an API key (key_id)
//	POST /account/sign-out                end the session
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
// Mount it under its prefix with the prefix stripped:
//
//	mux.Handle("/paper/", http.StripPrefix("/paper", b.Handler()))
func (b *Broker) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /oauth/authorize", b.page(b.handleAuthorizeShow))
	mux.Handle("POST /oauth/authorize", b.page(b.handleAuthorizeDecide))
	mux.Handle("POST /oauth/token", b.oauth(b.handleToken))
	mux.Handle("POST /oauth/revoke", b.oauth(b.handleRevoke))
	mux.Handle("POST /account/sign-in-links", b.apiWith(b.bearerWithKeysScope, b.handleSignInLink))
	mux.Handle("GET /account/sign-in", b.accountPages(b.handleSignIn))
	mux.Handle("GET /account", b.accountPages(b.handleAccountPage))
	mux.Handle("POST /account/keys", b.accountPages(b.handleKeyCreate))
	mux.Handle("POST /account/keys/revoke", b.accountPages(b.handleKeyRevoke))
	mux.Handle("POST /account/sign-out", b.accountPages(b.handleSignOut))
	mux.Handle("GET /v2/account", b.api(b.handleAccount))
	mux.Handle("GET /v2/account/configurations", b.api(b.handleConfigurations))
	mux.Handle("PATCH /v2/account/configurations", b.apiWith(b.scoped(scopeAccountWrite), b.handleConfigurationsUpdate))
	mux.Handle("GET /v2/account/activities", b.api(b.handleActivities))
	mux.Handle("GET /v2/account/activities/{type}", b.api(b.handleActivities))
	mux.Handle("GET /v2/account/portfolio/history", b.api(b.handleHistory))
	mux.Handle("GET /v2/positions", b.api(b.handlePositions))
	mux.Handle("DELETE /v2/positions", b.apiWith(b.scoped(scopeTrading), b.handleCloseAll))
	mux.Handle("GET /v2/positions/{symbol}", b.api(b.handlePosition))
	mux.Handle("DELETE /v2/positions/{symbol}", b.apiWith(b.scoped(scopeTrading), b.handleClose))
	mux.Handle("GET /v2/orders", b.api(b.handleOrders))
	mux.Handle("POST /v2/orders", b.apiWith(b.authenticateLater, b.handlePlace))
	mux.Handle("DELETE /v2/orders", b.apiWith(b.scoped(scopeTrading), b.handleCancelAll))
	mux.Handle("GET /v2/orders/{id}", b.apiWith(b.authenticateLater, b.handleOrder))
	mux.Handle("PATCH /v2/orders/{id}", b.apiWith(b.scoped(scopeTrading), b.handleReplace))
	mux.Handle("DELETE /v2/orders/{id}", b.apiWith(b.scoped(scopeTrading), b.handleCancel))
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

// The three dialects of the handler's errors: HTML pages for the browser,
// OAuth JSON for clients at the token endpoints, Alpaca's JSON for the
// API. Handlers return errors; these adapters alone write them.

// page adapts a handler of the authorization endpoint: a *pageError is
// shown as it is (a *retryError with its Retry-After header), anything
// else as a 500 page, logged.
func (b *Broker) page(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return b.pageWith("This connection cannot go on", "Close this page and connect again from the application.", h)
}

// accountPages adapts a handler of the account page as page does the
// authorization endpoint's.
func (b *Broker) accountPages(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return b.pageWith("Paper account", accountNote, h)
}

// pageWith adapts a handler of HTML pages: a *pageError is shown with the
// title and the closing note, anything else as a 500 page, logged.
func (b *Broker) pageWith(title, note string, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var re *retryError
		if errors.As(err, &re) {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(re.after.Seconds()))))
		}
		var pe *pageError
		if !errors.As(err, &pe) {
			b.logError(r, err)
			pe = &pageError{http.StatusInternalServerError, "Something went wrong on our side. Please try again later."}
		}
		title := title
		if pe.status >= 500 {
			title = "Something went wrong"
		}
		if err := b.render(w, pe.status, "error", errorPage{Title: title, Message: pe.msg, Note: note}); err != nil {
			b.logError(r, err)
			http.Error(w, "internal error", http.StatusInternalServerError)
		}
	})
}

// oauth adapts a handler of the token or revocation endpoint: an
// *oauthError is written as RFC 6749 §5.2 says, anything else as
// server_error, logged.
func (b *Broker) oauth(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var oe *oauthError
		if !errors.As(err, &oe) {
			b.logError(r, err)
			oe = &oauthError{status: http.StatusInternalServerError, code: "server_error", desc: "internal error"}
		}
		if oe.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="paper"`)
		}
		writeOAuthJSON(w, oe.status, struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}{oe.code, oe.desc})
	})
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
	if !ok || !strings.EqualFold(scheme, "Bearer") || !isSecret(tok) {
		return account{}, errUnauthorized
	}
	return account{token: hashSecret(tok)}, nil
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
	if !ok || !strings.EqualFold(scheme, "Bearer") || !isSecret(tok) {
		return account{}, errUnauthorized
	}
	a, err := accountByAccessToken(r.Context(), b.db, hashSecret(tok), b.clock())
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

// handleAccount answers GET /v2/account. The account is a cash account:
// every buying power is the cash, the multiplier 1, the margin fields
// zero, shorting disabled; see the package doc.
func (b *Broker) handleAccount(w http.ResponseWriter, r *http.Request, a account) error {
	vs, long, err := b.valuePositions(r.Context(), a)
	if err != nil {
		return err
	}
	last, err := b.lastEquity(r.Context(), a, vs)
	if err != nil {
		return err
	}
	equity := a.Cash.Add(long)
	return writeJSON(w, http.StatusOK, alpaca.AccountJSON{
		ID:                       a.ID.String(),
		AccountNumber:            a.Number,
		Status:                   "ACTIVE",
		CryptoStatus:             "ACTIVE",
		Currency:                 a.Currency,
		Cash:                     a.Cash,
		BuyingPower:              a.Cash,
		RegTBuyingPower:          a.Cash,
		DaytradingBuyingPower:    decimal.Zero,
		EffectiveBuyingPower:     a.Cash,
		NonMarginableBuyingPower: a.Cash,
		OptionsBuyingPower:       decimal.Zero,
		BodDtbp:                  decimal.Zero,
		AccruedFees:              decimal.Zero,
		PendingTransferIn:        decimal.Zero,
		PortfolioValue:           equity,
		Equity:                   equity,
		LastEquity:               last,
		LongMarketValue:          long,
		ShortMarketValue:         decimal.Zero,
		PositionMarketValue:      long,
		Multiplier:               decimal.New(1, 0),
		InitialMargin:            decimal.Zero,
		MaintenanceMargin:        decimal.Zero,
		LastMaintenanceMargin:    decimal.Zero,
		SMA:                      decimal.Zero,
		CreatedAt:                a.CreatedAt.UTC(),
		BalanceAsOf:              b.today().AddDays(-1).String(),
	})
}

// handlePositions answers GET /v2/positions, by symbol.
func (b *Broker) handlePositions(w http.ResponseWriter, r *http.Request, a account) error {
	out, err := b.positionsJSON(r.Context(), a, "")
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// errNoPosition is Alpaca's 404 for a symbol the account does not hold.
var errNoPosition = &apiError{http.StatusNotFound, codeNotFound, "position does not exist"}

// handlePosition answers GET /v2/positions/{symbol}, where symbol is a
// symbol or the asset's id.
func (b *Broker) handlePosition(w http.ResponseWriter, r *http.Request, a account) error {
	symbol, err := b.positionSymbol(r.Context(), r.PathValue("symbol"))
	if err != nil {
		return err
	}
	out, err := b.positionsJSON(r.Context(), a, symbol)
	if err != nil {
		return err
	}
	if len(out) == 0 {
		return errNoPosition
	}
	return writeJSON(w, http.StatusOK, out[0])
}

// positionSymbol returns the symbol of a path's symbol_or_asset_id.
func (b *Broker) positionSymbol(ctx context.Context, s string) (string, error) {
	if id, err := uuid.Parse(s); err == nil {
		as, err := b.md.Asset(ctx, id)
		if errors.Is(err, tradekit.ErrNotFound) {
			return "", errNoPosition
		}
		if err != nil {
			return "", fmt.Errorf("paper: %w", err)
		}
		return as.Symbol, nil
	}
	return marketdata.NormalizeSymbol(s), nil
}

// positionsJSON returns the account's positions as Alpaca sends them, or
// only the one in symbol when it is not "". qty_available is the
// quantity less that of the open sells; the intraday figures compare
// with the previous close (lastday_price), or with the average entry
// price when there is none.
func (b *Broker) positionsJSON(ctx context.Context, a account, symbol string) ([]alpaca.PositionJSON, error) {
	vs, _, err := b.valuePositions(ctx, a)
	if err != nil {
		return nil, err
	}
	if symbol != "" {
		vs = slices.DeleteFunc(vs, func(v valued) bool { return v.Symbol != symbol })
		if len(vs) == 0 {
			return nil, nil
		}
	}
	open, err := openOrders(ctx, b.db, a.ID)
	if err != nil {
		return nil, err
	}
	exchanges := map[uuid.UUID]string{}
	out := make([]alpaca.PositionJSON, 0, len(vs))
	for _, v := range vs {
		p := alpaca.PositionJSON{
			Symbol:        v.Symbol,
			AssetClass:    "us_equity",
			Qty:           v.Qty,
			QtyAvailable:  v.Qty,
			AvgEntryPrice: v.AvgEntryPrice,
			Side:          "long",
			CostBasis:     v.Qty.Mul(v.AvgEntryPrice),
			LastdayPrice:  v.lastday,
		}
		seen := map[uuid.UUID]bool{}
		for _, o := range open {
			if o.Symbol == v.Symbol && o.Side == string(brokers.Sell) && !seen[exitGroup(&o)] {
				seen[exitGroup(&o)] = true
				p.QtyAvailable = p.QtyAvailable.Sub(o.Qty)
			}
		}
		p.QtyAvailable = decimal.Max(p.QtyAvailable, decimal.Zero)
		mv, price := v.value, v.price
		upl := mv.Sub(p.CostBasis)
		p.MarketValue, p.CurrentPrice, p.UnrealizedPL = &mv, &price, &upl
		p.UnrealizedPLPC = ratio(upl, p.CostBasis)
		ref := v.AvgEntryPrice
		if v.lastday != nil {
			ref = *v.lastday
		}
		ipl := price.Sub(ref).Mul(v.Qty)
		p.UnrealizedIntradayPL = &ipl
		p.UnrealizedIntradayPLPC = ratio(ipl, ref.Mul(v.Qty))
		p.ChangeToday = ratio(price.Sub(ref), ref)
		if v.asset != nil {
			p.AssetID, p.AssetClass = v.asset.ID.String(), assetClass(v.asset.Type)
			ex, ok := exchanges[v.asset.ExchangeID]
			if !ok {
				e, err := b.md.Exchange(ctx, v.asset.ExchangeID)
				if err != nil {
					return nil, fmt.Errorf("paper: %w", err)
				}
				ex = e.Symbol
				exchanges[v.asset.ExchangeID] = ex
			}
			p.Exchange = ex
		}
		out = append(out, p)
	}
	return out, nil
}

// ratio returns num / den rounded to pctScale places, and zero when den
// is zero.
func ratio(num, den decimal.Decimal) *decimal.Decimal {
	r := decimal.Zero
	if !den.IsZero() {
		r = num.DivRound(den, pctScale)
	}
	return &r
}

// The limits of GET /v2/orders, Alpaca's.
const (
	defaultOrderLimit = 50
	maxOrderLimit     = 500
)

// handleOrders answers GET /v2/orders with Alpaca's parameters and
// defaults: status open (or closed, all), direction desc (or asc), limit
// 50 (at most 500), after and until (submission times, exclusive;
// RFC 3339 or a date, meaning its midnight UTC), side, and symbols (a
// comma-separated list).
func (b *Broker) handleOrders(w http.ResponseWriter, r *http.Request, a account) error {
	q := r.URL.Query()
	f := orderFilter{Status: "open", Limit: defaultOrderLimit}
	switch s := q.Get("status"); s {
	case "":
	case "open", "closed", "all":
		f.Status = s
	default:
		return &tradekit.ParamError{Param: "status", Msg: "must be open, closed or all"}
	}
	switch d := q.Get("direction"); d {
	case "", "desc":
	case "asc":
		f.Asc = true
	default:
		return &tradekit.ParamError{Param: "direction", Msg: "must be asc or desc"}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return &tradekit.ParamError{Param: "limit", Msg: "must be a positive integer"}
		}
		f.Limit = min(n, maxOrderLimit)
	}
	var err error
	if f.After, err = parseTime("after", q.Get("after")); err != nil {
		return err
	}
	if f.Until, err = parseTime("until", q.Get("until")); err != nil {
		return err
	}
	switch s := q.Get("side"); s {
	case "", "buy", "sell":
		f.Side = s
	default:
		return &tradekit.ParamError{Param: "side", Msg: "must be buy or sell"}
	}
	if s := q.Get("symbols"); s != "" {
		for _, sym := range strings.Split(s, ",") {
			if sym = marketdata.NormalizeSymbol(sym); sym != "" {
				f.Symbols = append(f.Symbols, sym)
			}
		}
	}
	switch s := q.Get("nested"); s {
	case "", "false":
	case "true":
		f.Nested = true
	default:
		return &tradekit.ParamError{Param: "nested", Msg: "must be true or false"}
	}
	list, err := listOrders(r.Context(), b.db, a.ID, f)
	if err != nil {
		return err
	}
	out, err := ordersJSON(r.Context(), b.db, list, f.Nested)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// parseTime parses a time parameter: RFC 3339, or a date meaning its
// midnight UTC; "" is the zero time.
func parseTime(param, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, &tradekit.ParamError{Param: param, Msg: "must be an RFC 3339 time or a YYYY-MM-DD date"}
}

// periodPattern matches Alpaca's history periods: a count and a unit, day,
// week, month or year ("A").
var periodPattern = regexp.MustCompile(`^([1-9][0-9]{0,3})([DWMA])$`)

// handleHistory answers GET /v2/account/portfolio/history: one point per
// calendar day (UTC) from the start of the period, or the day the account
// was opened if later, to date_end (default today; never after today).
// A period of n units covers the n days, weeks, months or years that end
// on date_end; the default is 1M. Only the timeframe 1D is served.
// Timestamps are the days' midnights UTC in Unix seconds, equity the
// equity at each day's end (see [Broker.Handler] and the package doc),
// profit_loss equity − base_value, and profit_loss_pct
// (equity − base_value) / base_value rounded to 8 places.
func (b *Broker) handleHistory(w http.ResponseWriter, r *http.Request, a account) error {
	q := r.URL.Query()
	if tf := q.Get("timeframe"); tf != "" && tf != "1D" {
		return &tradekit.ParamError{Param: "timeframe", Msg: "only 1D is served"}
	}
	end := b.today()
	if s := q.Get("date_end"); s != "" {
		d, err := calendar.ParseDate(s)
		if err != nil {
			return &tradekit.ParamError{Param: "date_end", Msg: "must be a YYYY-MM-DD date"}
		}
		if d.Before(end) {
			end = d
		}
	}
	period := q.Get("period")
	if period == "" {
		period = "1M"
	}
	m := periodPattern.FindStringSubmatch(period)
	if m == nil {
		return &tradekit.ParamError{Param: "period", Msg: "must be a count and a unit, D, W, M or A, such as 1A"}
	}
	n, _ := strconv.Atoi(m[1])
	e := end.Time(time.UTC)
	var before time.Time // the last day before the period
	switch m[2] {
	case "D":
		before = e.AddDate(0, 0, -n)
	case "W":
		before = e.AddDate(0, 0, -7*n)
	case "M":
		before = e.AddDate(0, -n, 0)
	case "A":
		before = e.AddDate(-n, 0, 0)
	}
	base, pts, err := b.history(r.Context(), a, calendar.DateOf(before).AddDays(1), end)
	if err != nil {
		return err
	}
	out := alpaca.PortfolioHistoryJSON{
		Timestamp:     make([]int64, len(pts)),
		Equity:        make([]*decimal.Decimal, len(pts)),
		ProfitLoss:    make([]*decimal.Decimal, len(pts)),
		ProfitLossPct: make([]*decimal.Decimal, len(pts)),
		BaseValue:     base,
		Timeframe:     "1D",
	}
	for i, p := range pts {
		eq, pl := p.Equity, p.Equity.Sub(base)
		pct := decimal.Zero
		if !base.IsZero() {
			pct = pl.DivRound(base, pctScale)
		}
		out.Timestamp[i] = p.Date.Time(time.UTC).Unix()
		out.Equity[i], out.ProfitLoss[i], out.ProfitLossPct[i] = &eq, &pl, &pct
	}
	return writeJSON(w, http.StatusOK, out)
}
