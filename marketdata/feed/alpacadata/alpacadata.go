package alpacadata

import (
	"context"
	"encoding/json"
	"fmt"
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

// DefaultBaseURL is Alpaca's market-data API.
const DefaultBaseURL = "https://data.alpaca.markets"

// symbolsPerRequest is the number of symbols asked in one request, which
// keeps URLs short.
const symbolsPerRequest = 200

// Config configures a [Client].
type Config struct {
	// BaseURL is the API's root; "" is [DefaultBaseURL].
	BaseURL string
	// KeyID and SecretKey are the account's API key.
	KeyID, SecretKey string
	// PerMinute, when positive, is a client-side limit of requests a
	// minute. Zero is no limit: the provider's 429s are honoured.
	PerMinute int
	// HTTP is the HTTP client; nil is one with a 60-second timeout.
	HTTP *http.Client
	// Retries, Backoff and Sleep tune retries; zero values are the defaults.
	Retries int
	Backoff time.Duration
	Sleep   func(ctx context.Context, d time.Duration) error
	// Observe, when set, gets each request's duration and status.
	Observe func(d time.Duration, status int)
}

// Client is Alpaca's [feed.Provider]. It is safe for concurrent use.
type Client struct {
	base *url.URL
	http *fetch.Client
	nyc  *time.Location
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
		return nil, fmt.Errorf("alpaca: base URL %q is not an absolute http or https URL: %w", cfg.BaseURL, tradekit.ErrInvalid)
	}
	if strings.TrimSpace(cfg.KeyID) == "" || strings.TrimSpace(cfg.SecretKey) == "" {
		return nil, fmt.Errorf("alpaca: no API key (set TRADEKIT_ALPACA_KEY_ID and TRADEKIT_ALPACA_SECRET_KEY): %w", tradekit.ErrInvalid)
	}
	nyc, err := time.LoadLocation("America/New_York")
	if err != nil {
		return nil, fmt.Errorf("alpaca: %w", err)
	}
	return &Client{base: base, nyc: nyc, http: fetch.New(fetch.Config{Provider: "alpaca", HTTP: cfg.HTTP, PerMinute: cfg.PerMinute,
		Retries: cfg.Retries, Backoff: cfg.Backoff, Sleep: cfg.Sleep, Observe: cfg.Observe, Message: message,
		Auth: func(r *http.Request) {
			r.Header.Set("APCA-API-KEY-ID", cfg.KeyID)
			r.Header.Set("APCA-API-SECRET-KEY", cfg.SecretKey)
		}})}, nil
}

// Name returns "alpaca".
func (c *Client) Name() string { return "alpaca" }

// message reads Alpaca's error bodies: {"code":40110000,"message":"…"}.
func message(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Message
}

func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = q.Encode()
	return u.String()
}

// chunks cuts symbols into groups of symbolsPerRequest.
func chunks(symbols []string) [][]string {
	var out [][]string
	for len(symbols) > 0 {
		n := min(len(symbols), symbolsPerRequest)
		out = append(out, symbols[:n])
		symbols = symbols[n:]
	}
	return out
}

// bars is the answer of /v2/stocks/bars.
type bars struct {
	Bars map[string][]struct {
		T string      `json:"t"`
		O json.Number `json:"o"`
		H json.Number `json:"h"`
		L json.Number `json:"l"`
		C json.Number `json:"c"`
		V float64     `json:"v"`
	} `json:"bars"`
	NextPageToken *string `json:"next_page_token"`
}

// DayBars returns the raw daily bars of the symbols on day, symbolsPerRequest
// symbols a request, every page of each. The error wraps
// [tradekit.ErrInvalid] when symbols is empty: Alpaca answers only for the
// symbols asked.
func (c *Client) DayBars(ctx context.Context, day calendar.Date, symbols []string) ([]feed.Bar, error) {
	if len(symbols) == 0 {
		return nil, fmt.Errorf("alpaca: no symbols to ask for: the Alpaca feed updates the US stocks and ETFs the database holds; import some first: %w", tradekit.ErrInvalid)
	}
	var out []feed.Bar
	for _, group := range chunks(symbols) {
		q := url.Values{"symbols": {strings.Join(group, ",")}, "timeframe": {"1Day"}, "adjustment": {"raw"},
			"start": {day.String()}, "end": {day.String()}, "limit": {"10000"}}
		for {
			var b bars
			if err := c.http.GetJSON(ctx, c.endpoint("/v2/stocks/bars", q), &b); err != nil {
				return nil, err
			}
			for sym, bs := range b.Bars {
				for _, r := range bs {
					t, err := time.Parse(time.RFC3339, r.T)
					if err != nil || calendar.DateOf(t.In(c.nyc)) != day {
						continue
					}
					bar := feed.Bar{Symbol: sym, Volume: int64(r.V + 0.5)}
					ok := true
					for _, f := range [...]struct {
						dst *decimal.Decimal
						v   json.Number
					}{{&bar.Open, r.O}, {&bar.High, r.H}, {&bar.Low, r.L}, {&bar.Close, r.C}} {
						if *f.dst, err = decimal.NewFromString(string(f.v)); err != nil {
							ok = false
						}
					}
					if ok {
						out = append(out, bar)
					}
				}
			}
			if b.NextPageToken == nil || *b.NextPageToken == "" {
				break
			}
			q.Set("page_token", *b.NextPageToken)
		}
	}
	return out, nil
}

// Assets returns nothing: Alpaca's market-data API has no reference data,
// and answers only for symbols the database already holds.
func (c *Client) Assets(context.Context, []string) ([]feed.AssetInfo, error) { return nil, nil }

// corporateActions is the answer of /v1/corporate-actions.
type corporateActions struct {
	CorporateActions struct {
		ForwardSplits []split `json:"forward_splits"`
		ReverseSplits []split `json:"reverse_splits"`
		CashDividends []struct {
			Symbol string      `json:"symbol"`
			Rate   json.Number `json:"rate"`
			ExDate string      `json:"ex_date"`
		} `json:"cash_dividends"`
	} `json:"corporate_actions"`
	NextPageToken *string `json:"next_page_token"`
}

type split struct {
	Symbol  string      `json:"symbol"`
	NewRate json.Number `json:"new_rate"`
	OldRate json.Number `json:"old_rate"`
	ExDate  string      `json:"ex_date"`
}

// Actions returns the forward and reverse splits (ratio new_rate/old_rate)
// and cash dividends of the symbols whose ex-date is in the range, every
// page of each.
func (c *Client) Actions(ctx context.Context, from, to calendar.Date, symbols []string) ([]feed.Action, error) {
	var out []feed.Action
	for _, group := range chunks(symbols) {
		q := url.Values{"symbols": {strings.Join(group, ",")}, "types": {"forward_split,reverse_split,cash_dividend"},
			"start": {from.String()}, "end": {to.String()}, "limit": {"1000"}}
		for {
			var ca corporateActions
			if err := c.http.GetJSON(ctx, c.endpoint("/v1/corporate-actions", q), &ca); err != nil {
				return nil, err
			}
			for _, s := range append(ca.CorporateActions.ForwardSplits, ca.CorporateActions.ReverseSplits...) {
				d, err1 := calendar.ParseDate(s.ExDate)
				n, err2 := decimal.NewFromString(string(s.NewRate))
				o, err3 := decimal.NewFromString(string(s.OldRate))
				if err1 != nil || err2 != nil || err3 != nil || !o.IsPositive() || !n.IsPositive() {
					continue
				}
				out = append(out, feed.Action{Symbol: s.Symbol, Date: d, Kind: marketdata.Split, Value: n.DivRound(o, 10)})
			}
			for _, dv := range ca.CorporateActions.CashDividends {
				d, err1 := calendar.ParseDate(dv.ExDate)
				v, err2 := decimal.NewFromString(string(dv.Rate))
				if err1 != nil || err2 != nil || !v.IsPositive() {
					continue
				}
				out = append(out, feed.Action{Symbol: dv.Symbol, Date: d, Kind: marketdata.Dividend, Value: v})
			}
			if ca.NextPageToken == nil || *ca.NextPageToken == "" {
				break
			}
			q.Set("page_token", *ca.NextPageToken)
		}
	}
	return out, nil
}
