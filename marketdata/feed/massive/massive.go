package massive

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/marketdata/feed/internal/fetch"
)

// DefaultBaseURL is Massive's REST API.
const DefaultBaseURL = "https://api.massive.com"

// Config configures a [Client].
type Config struct {
	// BaseURL is the API's root; "" is [DefaultBaseURL]. Proxies and tests
	// set their own.
	BaseURL string
	// APIKey is the account's key.
	APIKey string
	// Bearer sends the key in an Authorization: Bearer header instead of
	// the apiKey query parameter.
	Bearer bool
	// PerMinute, when positive, is a client-side limit of requests a
	// minute (Massive's free plan allows 5). Zero is no limit: the
	// provider's 429s are honoured.
	PerMinute int
	// HTTP is the HTTP client; nil is one with a 60-second timeout.
	HTTP *http.Client
	// Retries, Backoff and Sleep tune retries (see fetch.Config); zero
	// values are the defaults.
	Retries int
	Backoff time.Duration
	Sleep   func(ctx context.Context, d time.Duration) error
	// Observe, when set, gets each request's duration and status.
	Observe func(d time.Duration, status int)
}

// Client is Massive's [feed.Provider]. It is safe for concurrent use.
type Client struct {
	base   *url.URL
	key    string
	bearer bool
	http   *fetch.Client
}

var _ feed.Provider = (*Client)(nil)

// New returns a Client. The error wraps [tradekit.ErrInvalid] for a base
// URL that is not an absolute http(s) URL or a missing key.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	base, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("massive: base URL %q is not an absolute http or https URL: %w", cfg.BaseURL, tradekit.ErrInvalid)
	}
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, fmt.Errorf("massive: no API key (set TRADEKIT_MASSIVE_API_KEY): %w", tradekit.ErrInvalid)
	}
	c := &Client{base: base, key: cfg.APIKey, bearer: cfg.Bearer}
	fc := fetch.Config{Provider: "massive", HTTP: cfg.HTTP, PerMinute: cfg.PerMinute, Retries: cfg.Retries,
		Backoff: cfg.Backoff, Sleep: cfg.Sleep, Observe: cfg.Observe, Message: message}
	if cfg.Bearer {
		fc.Auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+cfg.APIKey) }
	}
	c.http = fetch.New(fc)
	return c, nil
}

// Name returns "massive".
func (c *Client) Name() string { return "massive" }

// endpoint returns the URL of path with the query q, carrying the key as
// apiKey unless it goes in a header.
func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = c.withKey(q).Encode()
	return u.String()
}

func (c *Client) withKey(q url.Values) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if !c.bearer {
		q.Set("apiKey", c.key)
	}
	return q
}

// next returns the URL of a next_url: its path and query on the
// configured base (a next_url names the provider's public host, which a
// proxy or a test stands in for), with the key added again.
func (c *Client) next(nextURL string) (string, error) {
	n, err := url.Parse(nextURL)
	if err != nil {
		return "", fmt.Errorf("massive: next_url %q: %w", nextURL, err)
	}
	u := *c.base
	path := n.Path
	if c.base.Path != "" && !strings.HasPrefix(path, c.base.Path+"/") {
		path = c.base.Path + path
	}
	u.Path = path
	u.RawQuery = c.withKey(n.Query()).Encode()
	return u.String(), nil
}

// message reads Massive's error bodies: {"status":"ERROR","error":"…"} or
// {"status":"NOT_AUTHORIZED","message":"…"}.
func message(body []byte) string {
	var e struct {
		Status  string `json:"status"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	if e.Error != "" {
		return e.Error
	}
	return e.Message
}

// groupedDaily is the answer of /v2/aggs/grouped/locale/us/market/stocks/{date}.
type groupedDaily struct {
	Status       string `json:"status"`
	ResultsCount int    `json:"resultsCount"`
	Results      []struct {
		T string `json:"T"`
		// Ts is there so that "t" (the window's start, in ms) is not
		// decoded into T: encoding/json matches keys ignoring case.
		Ts int64       `json:"t"`
		O  json.Number `json:"o"`
		H  json.Number `json:"h"`
		L  json.Number `json:"l"`
		C  json.Number `json:"c"`
		V  float64     `json:"v"`
	} `json:"results"`
}

// DayBars returns the raw bars of every US stock Massive has for day, in
// one request (grouped daily aggregates, adjusted=false); symbols is
// ignored. Volumes are rounded to whole shares.
func (c *Client) DayBars(ctx context.Context, day calendar.Date, _ []string) ([]feed.Bar, error) {
	var g groupedDaily
	if err := c.http.GetJSON(ctx, c.endpoint("/v2/aggs/grouped/locale/us/market/stocks/"+day.String(),
		url.Values{"adjusted": {"false"}}), &g); err != nil {
		return nil, err
	}
	bars := make([]feed.Bar, 0, len(g.Results))
	for _, r := range g.Results {
		b := feed.Bar{Symbol: r.T, Volume: int64(math.Round(r.V))}
		var err error
		for _, f := range [...]struct {
			dst *decimal.Decimal
			v   json.Number
		}{{&b.Open, r.O}, {&b.High, r.H}, {&b.Low, r.L}, {&b.Close, r.C}} {
			if *f.dst, err = decimal.NewFromString(string(f.v)); err != nil {
				break
			}
		}
		if err != nil {
			continue // a bar without its prices: left out, as an invalid one is
		}
		bars = append(bars, b)
	}
	return bars, nil
}

// price converts a JSON number to a decimal with the digits it was
// written with.
func price(f float64) decimal.Decimal { return decimal.NewFromFloat(f) }

// tickers is the answer of /v3/reference/tickers.
type tickers struct {
	NextURL string `json:"next_url"`
	Results []struct {
		Ticker          string `json:"ticker"`
		Name            string `json:"name"`
		Type            string `json:"type"`
		PrimaryExchange string `json:"primary_exchange"`
		CurrencyName    string `json:"currency_name"`
		Market          string `json:"market"`
	} `json:"results"`
}

// listAllAbove is the number of symbols above which Assets pages through
// the whole list of stock tickers (1,000 a page) instead of asking for
// each symbol.
const listAllAbove = 20

// Assets returns the reference data of the symbols from the tickers
// reference: one request per symbol for a few, else the whole list of
// stock tickers, page by page. A symbol Massive does not know is left out.
func (c *Client) Assets(ctx context.Context, symbols []string) ([]feed.AssetInfo, error) {
	want := map[string]bool{}
	for _, s := range symbols {
		want[s] = true
	}
	var out []feed.AssetInfo
	collect := func(t tickers) {
		for _, r := range t.Results {
			if !want[r.Ticker] {
				continue
			}
			delete(want, r.Ticker)
			out = append(out, feed.AssetInfo{Symbol: r.Ticker, Name: r.Name, Type: assetType(r.Type),
				MIC: r.PrimaryExchange, Currency: strings.ToUpper(r.CurrencyName)})
		}
	}
	if len(symbols) <= listAllAbove {
		for _, s := range symbols {
			var t tickers
			if err := c.http.GetJSON(ctx, c.endpoint("/v3/reference/tickers", url.Values{"ticker": {s}, "market": {"stocks"}}), &t); err != nil {
				return nil, err
			}
			collect(t)
		}
		return out, nil
	}
	u := c.endpoint("/v3/reference/tickers", url.Values{"market": {"stocks"}, "limit": {"1000"}, "order": {"asc"}, "sort": {"ticker"}})
	for u != "" && len(want) > 0 {
		var t tickers
		if err := c.http.GetJSON(ctx, u, &t); err != nil {
			return nil, err
		}
		collect(t)
		if t.NextURL == "" {
			break
		}
		var err error
		if u, err = c.next(t.NextURL); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// assetType maps Massive's ticker types: the exchange-traded products are
// ETFs, the rest (common and preferred stock, ADRs, units…) stock.
func assetType(t string) marketdata.AssetType {
	switch t {
	case "ETF", "ETN", "ETV", "ETS":
		return marketdata.ETF
	}
	return marketdata.Stock
}

// splits is the answer of /v3/reference/splits.
type splits struct {
	NextURL string `json:"next_url"`
	Results []struct {
		Ticker        string  `json:"ticker"`
		ExecutionDate string  `json:"execution_date"`
		SplitFrom     float64 `json:"split_from"`
		SplitTo       float64 `json:"split_to"`
	} `json:"results"`
}

// dividends is the answer of /v3/reference/dividends.
type dividends struct {
	NextURL string `json:"next_url"`
	Results []struct {
		Ticker         string  `json:"ticker"`
		ExDividendDate string  `json:"ex_dividend_date"`
		CashAmount     float64 `json:"cash_amount"`
		Currency       string  `json:"currency"`
		DividendType   string  `json:"dividend_type"`
	} `json:"results"`
}

// Actions returns the splits (ratio split_to/split_from) and dividends
// (every dividend_type Massive lists, CD, SC, LT and ST, is paid in cash)
// whose ex-date is in the range, every page of each; symbols is ignored.
func (c *Client) Actions(ctx context.Context, from, to calendar.Date, _ []string) ([]feed.Action, error) {
	var out []feed.Action
	u := c.endpoint("/v3/reference/splits", url.Values{"execution_date.gte": {from.String()},
		"execution_date.lte": {to.String()}, "limit": {"1000"}})
	for u != "" {
		var s splits
		if err := c.http.GetJSON(ctx, u, &s); err != nil {
			return nil, err
		}
		for _, r := range s.Results {
			d, err := calendar.ParseDate(r.ExecutionDate)
			if err != nil || r.SplitFrom <= 0 || r.SplitTo <= 0 {
				continue // not a split we can apply
			}
			out = append(out, feed.Action{Symbol: r.Ticker, Date: d, Kind: marketdata.Split,
				Value: price(r.SplitTo).DivRound(price(r.SplitFrom), 10)})
		}
		if u = ""; s.NextURL != "" {
			var err error
			if u, err = c.next(s.NextURL); err != nil {
				return nil, err
			}
		}
	}
	u = c.endpoint("/v3/reference/dividends", url.Values{"ex_dividend_date.gte": {from.String()},
		"ex_dividend_date.lte": {to.String()}, "limit": {"1000"}})
	for u != "" {
		var dv dividends
		if err := c.http.GetJSON(ctx, u, &dv); err != nil {
			return nil, err
		}
		for _, r := range dv.Results {
			d, err := calendar.ParseDate(r.ExDividendDate)
			if err != nil || r.CashAmount <= 0 {
				continue
			}
			out = append(out, feed.Action{Symbol: r.Ticker, Date: d, Kind: marketdata.Dividend, Value: price(r.CashAmount)})
		}
		if u = ""; dv.NextURL != "" {
			var err error
			if u, err = c.next(dv.NextURL); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
