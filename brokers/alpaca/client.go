package alpaca

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
)

const (
	// expiryMargin is how long before its expiry a token is refreshed.
	expiryMargin = 10 * time.Second
	// ordersPageSize is the limit Fills asks for: Alpaca's maximum.
	ordersPageSize = 500
	// maxBody bounds the size of a successful answer's body.
	maxBody = 32 << 20
	// defaultTimeout is the timeout of the default HTTP client.
	defaultTimeout = 30 * time.Second
)

// Config configures a [Client].
type Config struct {
	// BaseURL is the trading API's base URL, without /v2: [LiveURL],
	// [PaperURL], or Tradekit's paper broker, such as
	// http://127.0.0.1:8080/paper.
	BaseURL string

	// OAuth refreshes the token with a refresh-token grant at
	// OAuth.Endpoint.TokenURL; see [OAuthConfig]. If OAuth is nil, Token
	// is static: it is sent as it is and never refreshed.
	OAuth *oauth2.Config

	// Token is the user's token. The Client keeps a copy. A nil Token
	// is a token with no access token.
	Token *oauth2.Token

	// OnToken, if not nil, is called with each refreshed token before
	// the Client uses it, so that the caller can persist it (encrypted):
	// the refresh may have rotated the refresh token. If OnToken fails,
	// the call that refreshed fails with its error, and the next call
	// offers the same token to OnToken again before using it. OnToken is
	// never called concurrently by one Client.
	OnToken func(ctx context.Context, t *oauth2.Token) error

	// HTTPClient sends the API requests and the token refreshes. If nil,
	// a client with a 30 s timeout is used.
	HTTPClient *http.Client
}

// Client is a [brokers.Broker] that speaks Alpaca's Trading API v2 for
// one user, authorised by that user's OAuth token. It refreshes the
// token as [Config] describes. A Client is safe for concurrent use; it
// runs one refresh at a time, and calls that find the token being
// refreshed wait for that refresh rather than start their own. Once the
// refresh token is known to be useless (there is none, or the token
// endpoint answered invalid_grant), the Client does not try it again:
// every call that needs a refresh fails at once, wrapping
// [tradekit.ErrUnauthorized], and the user must authorise anew.
type Client struct {
	base    string
	baseErr error // why base is unusable, or nil
	hc      *http.Client
	oauth   *oauth2.Config
	onToken func(context.Context, *oauth2.Token) error

	sem chan struct{} // holds a value while a refresh runs

	mu      sync.Mutex    // guards the fields below
	tok     *oauth2.Token // the current token: replaced, never modified
	unsaved bool          // tok came from a refresh and OnToken has not yet accepted it
	dead    error         // why tok cannot be refreshed, once that is known for good
}

var _ brokers.Broker = (*Client)(nil)

// New returns a Client configured by cfg. New does not check cfg: a
// BaseURL that is not an absolute http or https URL makes every call
// fail with an error wrapping [tradekit.ErrInvalid].
func New(cfg Config) *Client {
	c := &Client{
		base:    strings.TrimRight(cfg.BaseURL, "/"),
		hc:      cfg.HTTPClient,
		oauth:   cfg.OAuth,
		onToken: cfg.OnToken,
		sem:     make(chan struct{}, 1),
		tok:     &oauth2.Token{},
	}
	if c.hc == nil {
		c.hc = &http.Client{Timeout: defaultTimeout}
	}
	if cfg.Token != nil {
		t := *cfg.Token
		c.tok = &t
	}
	if u, err := url.Parse(c.base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.baseErr = fmt.Errorf("alpaca: base URL %s is not an absolute http or https URL: %w", tradekit.Quote(cfg.BaseURL), tradekit.ErrInvalid)
	}
	return c
}

// Account returns the account of GET /v2/account.
//
// Like every method of Client, it returns an [*APIError] when the API
// answers with an error status, and otherwise wraps
// [tradekit.ErrUnavailable] when the API cannot be reached or its answer
// cannot be read, and [tradekit.ErrUnauthorized] when the token has
// expired and cannot be refreshed.
func (c *Client) Account(ctx context.Context) (brokers.Account, error) {
	var a AccountJSON
	if err := c.get(ctx, "/v2/account", nil, &a); err != nil {
		return brokers.Account{}, err
	}
	return brokers.Account{
		ID:       a.ID,
		Number:   a.AccountNumber,
		Status:   a.Status,
		Currency: a.Currency,
		Cash:     a.Cash,
		Equity:   a.Equity,
	}, nil
}

// Positions returns the open positions of GET /v2/positions, in the
// API's order. A short position's quantity is negative, whether the API
// sends it negative or sends it positive with side "short". A market
// value the API sends as null is zero.
func (c *Client) Positions(ctx context.Context) ([]brokers.Position, error) {
	var ps []PositionJSON
	if err := c.get(ctx, "/v2/positions", nil, &ps); err != nil {
		return nil, err
	}
	out := make([]brokers.Position, 0, len(ps))
	for _, p := range ps {
		q := p.Qty
		if p.Side == "short" && q.IsPositive() {
			q = q.Neg()
		}
		var mv decimal.Decimal // zero
		if p.MarketValue != nil {
			mv = *p.MarketValue
		}
		out = append(out, brokers.Position{
			Symbol:        p.Symbol,
			Quantity:      q,
			AvgEntryPrice: p.AvgEntryPrice,
			MarketValue:   mv,
			CostBasis:     p.CostBasis,
		})
	}
	return out, nil
}

// Fills returns the fills of the orders submitted after the given time,
// sorted by the time of the fill, oldest first. It reads the closed
// orders of GET /v2/orders, oldest submission first, 500 at a time, and
// keeps those with a positive filled_qty, as one fill each at
// filled_avg_price, at filled_at (updated_at for an order that was
// cancelled after a partial fill, which has no filled_at). A zero after
// asks for every closed order.
//
// The API filters by submission time to the second, so each next page
// starts at the second of the previous page's last submission, and the
// orders seen twice are dropped by id. Fills fails, wrapping
// [tradekit.ErrUnavailable], if a whole page of orders was submitted
// within one second, since it cannot page past them.
func (c *Client) Fills(ctx context.Context, after time.Time) ([]brokers.Fill, error) {
	var fills []brokers.Fill
	err := c.eachOrder(ctx, "closed", after, func(o OrderJSON) error {
		if !o.FilledQty.IsPositive() {
			return nil
		}
		f, err := fill(o)
		if err != nil {
			return err
		}
		fills = append(fills, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(fills, func(a, b brokers.Fill) int { return a.Time.Compare(b.Time) })
	return fills, nil
}

// fill converts an order with a positive filled quantity.
func fill(o OrderJSON) (brokers.Fill, error) {
	malformed := func(what string) error {
		return fmt.Errorf("alpaca: GET /v2/orders: %w: order %s %s", tradekit.ErrUnavailable, tradekit.Quote(o.ID), what)
	}
	var side brokers.Side
	switch o.Side {
	case "buy":
		side = brokers.Buy
	case "sell":
		side = brokers.Sell
	default:
		return brokers.Fill{}, malformed("has side " + tradekit.Quote(o.Side))
	}
	if o.FilledAvgPrice == nil {
		return brokers.Fill{}, malformed("has a filled_qty and no filled_avg_price")
	}
	at := o.UpdatedAt
	if o.FilledAt != nil {
		at = *o.FilledAt
	}
	return brokers.Fill{
		ID:       o.ID,
		Symbol:   o.Symbol,
		Side:     side,
		Quantity: o.FilledQty,
		Price:    *o.FilledAvgPrice,
		Time:     at,
	}, nil
}

// History returns the account's daily equity over the past year, oldest
// first, from GET /v2/account/portfolio/history?period=1A&timeframe=1D.
// Each point's date is the UTC calendar day of its timestamp, at
// midnight UTC; days whose equity is null are left out. Each point's
// flow is the sum of the day's cash movements of the types in
// [FlowTypes] (cashflow_types), as the API reports them.
//
// Alpaca documents the timestamps as Unix seconds, but its own example
// shows milliseconds; a timestamp too large to be seconds (after the
// year 5000) is read as milliseconds.
func (c *Client) History(ctx context.Context) ([]brokers.EquityPoint, error) {
	q := url.Values{"period": {"1A"}, "timeframe": {"1D"}, "cashflow_types": {strings.Join(FlowTypes, ",")}}
	var h PortfolioHistoryJSON
	if err := c.get(ctx, "/v2/account/portfolio/history", q, &h); err != nil {
		return nil, err
	}
	if len(h.Equity) != len(h.Timestamp) {
		return nil, fmt.Errorf("alpaca: GET /v2/account/portfolio/history: %w: %d timestamps and %d equities",
			tradekit.ErrUnavailable, len(h.Timestamp), len(h.Equity))
	}
	out := make([]brokers.EquityPoint, 0, len(h.Equity))
	for i, e := range h.Equity {
		if e == nil {
			continue
		}
		ts := h.Timestamp[i]
		if ts > 1e11 || ts < -1e11 {
			ts /= 1000
		}
		y, m, d := time.Unix(ts, 0).UTC().Date()
		var flow decimal.Decimal
		for _, amounts := range h.Cashflow {
			if i < len(amounts) && amounts[i] != nil {
				flow = flow.Add(*amounts[i])
			}
		}
		out = append(out, brokers.EquityPoint{Date: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), Equity: *e, Flow: flow})
	}
	return out, nil
}

// FlowTypes are the account activities that move money into or out of an
// account rather than earn it: cash deposits (CSD), cash withdrawals (CSW)
// and cash journals between accounts (JNLC).
var FlowTypes = []string{"CSD", "CSW", "JNLC"}

// get sends GET path?query with the user's token and decodes the
// answer's JSON body into v; see [Client.do].
func (c *Client) get(ctx context.Context, path string, query url.Values, v any) error {
	return c.do(ctx, http.MethodGet, path, query, nil, v)
}

// do sends method path?query with the user's token and, when body is not
// nil, body as JSON, and decodes the answer's JSON body into v unless v
// is nil. It refreshes the token first if it expires within
// expiryMargin, and once more, then retries once, if the API answers 401.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, v any) error {
	if c.baseErr != nil {
		return c.baseErr
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("alpaca: %s %s: %w: %w", method, path, tradekit.ErrInvalid, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return fmt.Errorf("alpaca: %s %s: %w: %w", method, path, tradekit.ErrInvalid, err)
	}
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}

	t, err := c.token(ctx)
	if err != nil {
		return err
	}
	resp, err := c.send(req, payload, t)
	if err != nil {
		return fmt.Errorf("alpaca: %s %s: %w: %w", method, path, tradekit.ErrUnavailable, err)
	}
	if resp.StatusCode == http.StatusUnauthorized && c.oauth != nil {
		refused := readAPIError(resp)
		nt, err := c.renew(ctx, t, true)
		if errors.Is(err, errNoRefreshToken) {
			return refused
		}
		if err != nil {
			return err
		}
		if resp, err = c.send(req, payload, nt); err != nil {
			return fmt.Errorf("alpaca: %s %s: %w: %w", method, path, tradekit.ErrUnavailable, err)
		}
	}
	if resp.StatusCode/100 != 2 {
		return readAPIError(resp)
	}
	defer resp.Body.Close()
	if v == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(v); err != nil {
		return fmt.Errorf("alpaca: %s %s: %w: malformed body: %w", method, path, tradekit.ErrUnavailable, err)
	}
	return nil
}

// send sends a copy of req with t's access token and the body payload,
// if any.
func (c *Client) send(req *http.Request, payload []byte, t *oauth2.Token) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+t.AccessToken)
	if payload != nil {
		r.Body = io.NopCloser(bytes.NewReader(payload))
		r.ContentLength = int64(len(payload))
	}
	return c.hc.Do(r)
}

// errNoRefreshToken reports a token that needs refreshing and has no
// refresh token.
var errNoRefreshToken = fmt.Errorf("alpaca: the access token has expired and there is no refresh token: %w", tradekit.ErrUnauthorized)

// expiring reports whether t must be refreshed before it is used.
func expiring(t *oauth2.Token, now time.Time) bool {
	return t.AccessToken == "" || (!t.Expiry.IsZero() && t.Expiry.Before(now.Add(expiryMargin)))
}

// token returns the token to send, renewing it first if it expires soon
// or OnToken has yet to accept it.
func (c *Client) token(ctx context.Context) (*oauth2.Token, error) {
	c.mu.Lock()
	t, unsaved := c.tok, c.unsaved
	c.mu.Unlock()
	if c.oauth == nil {
		if t.AccessToken == "" {
			return nil, fmt.Errorf("alpaca: no access token: %w", tradekit.ErrUnauthorized)
		}
		return t, nil
	}
	if !unsaved && !expiring(t, time.Now()) {
		return t, nil
	}
	return c.renew(ctx, t, false)
}

// renew returns the token to send in place of stale, the token the
// caller last read; force means that the API refused stale. It runs
// alone: a caller that finds the token already replaced while it waited
// uses the replacement. Otherwise it refreshes stale when force is set
// or stale expires soon, and hands a refreshed token to OnToken.
func (c *Client) renew(ctx context.Context, stale *oauth2.Token, force bool) (*oauth2.Token, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("alpaca: waiting for a token refresh: %w: %w", tradekit.ErrUnavailable, ctx.Err())
	}
	defer func() { <-c.sem }()

	c.mu.Lock()
	cur, unsaved, dead := c.tok, c.unsaved, c.dead
	c.mu.Unlock()
	if cur == stale && !unsaved && (force || expiring(cur, time.Now())) {
		if dead != nil {
			return nil, dead
		}
		nt, err := c.refresh(ctx, cur)
		if err != nil {
			if errors.Is(err, tradekit.ErrUnauthorized) {
				c.mu.Lock()
				c.dead = err
				c.mu.Unlock()
			}
			return nil, err
		}
		cur, unsaved = nt, c.onToken != nil
		c.mu.Lock()
		c.tok, c.unsaved = cur, unsaved
		c.mu.Unlock()
	}
	if unsaved {
		if err := c.onToken(ctx, cur); err != nil {
			return nil, fmt.Errorf("alpaca: saving the refreshed token: %w", err)
		}
		c.mu.Lock()
		c.unsaved = false
		c.mu.Unlock()
	}
	return cur, nil
}

// refresh obtains a new token with old's refresh token. An error wraps
// [tradekit.ErrUnauthorized] when there is no refresh token or the
// token endpoint answers invalid_grant (the grant is revoked or
// expired), and [tradekit.ErrUnavailable] otherwise.
func (c *Client) refresh(ctx context.Context, old *oauth2.Token) (*oauth2.Token, error) {
	if old.RefreshToken == "" {
		return nil, errNoRefreshToken
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, c.hc)
	nt, err := c.oauth.TokenSource(ctx, &oauth2.Token{RefreshToken: old.RefreshToken}).Token()
	if err == nil {
		return nt, nil
	}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return nil, fmt.Errorf("alpaca: refreshing the token: %w: %w", tradekit.ErrUnavailable, err)
	}
	kind := tradekit.ErrUnavailable
	if re.ErrorCode == "invalid_grant" {
		kind = tradekit.ErrUnauthorized
	}
	var msg string
	switch {
	case re.ErrorCode != "" && re.ErrorDescription != "":
		msg = re.ErrorCode + ": " + re.ErrorDescription
	case re.ErrorCode != "":
		msg = re.ErrorCode
	case re.Response != nil:
		msg = re.Response.Status
	}
	return nil, fmt.Errorf("alpaca: refreshing the token: %w: %s", kind, msg)
}
