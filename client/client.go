package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Options tunes a client made by [New]. The zero value gives the defaults.
type Options struct {
	// HTTPClient sends the requests. Default: a client with a 30-second
	// timeout.
	HTTPClient *http.Client
	// MaxRetries is how many times a request answered 429 or 503 is sent
	// again. Default 3; negative for none.
	MaxRetries int
	// MaxWait bounds one wait before a retry, whatever Retry-After says.
	// Default 60 s.
	MaxWait time.Duration
}

// API is a client of one Tradekit server with one API key: the generated
// operations, plus iterators over paginated lists.
type API struct {
	*ClientWithResponses
}

// New returns a client of the server at baseURL (scheme and host, e.g.
// "https://tradekit.example.com"; no /api/v1) that sends key with every
// request.
func New(baseURL, key string, opts Options) (*API, error) {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 3
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = time.Minute
	}
	c, err := NewClientWithResponses(strings.TrimRight(baseURL, "/"),
		WithHTTPClient(&retrier{client: opts.HTTPClient, retries: max(opts.MaxRetries, 0), maxWait: opts.MaxWait}),
		WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+key)
			return nil
		}))
	if err != nil {
		return nil, err
	}
	return &API{c}, nil
}

// retrier sends requests, again after a 429 or 503 when that is safe.
type retrier struct {
	client  *http.Client
	retries int
	maxWait time.Duration
}

// Do implements [HttpRequestDoer]. No operation of the API has a request
// body, so a request can be sent again as it is.
func (r *retrier) Do(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		res, err := r.client.Do(req)
		if err != nil || attempt == r.retries || !retryable(req, res.StatusCode) {
			return res, err
		}
		wait := retryAfter(res.Header.Get("Retry-After"), attempt, time.Now())
		res.Body.Close()
		t := time.NewTimer(min(wait, r.maxWait))
		select {
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		case <-t.C:
		}
	}
}

// retryable reports whether a request answered status may be sent again:
// a 429 or 503, but never an order placement without a clientOrderId,
// which the server cannot recognise as a repeat.
func retryable(req *http.Request, status int) bool {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return false
	}
	placing := req.Method == http.MethodPost && strings.TrimSuffix(req.URL.Path, "/") == "/api/v1/brokers/orders"
	return !placing || req.URL.Query().Get("clientOrderId") != ""
}

// retryAfter returns the wait a Retry-After value asks for (seconds, or an
// HTTP date), or without one an exponential backoff from one second.
func retryAfter(v string, attempt int, now time.Time) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return time.Second << min(attempt, 6)
}

// Error is an error answer of the API: its HTTP status and the error
// envelope's code (VALIDATION_ERROR, NOT_FOUND, ORDER_REJECTED, …),
// message and details (e.g. details["fields"] naming the bad parameters,
// details["rule"] the broken guardrail).
type Error struct {
	Status    int
	Code      string
	Message   string
	Details   map[string]any
	RequestID string // the X-Request-Id of the answer, for the server's log
}

// Error returns "tradekit: 404 NOT_FOUND: asset … not found".
func (e *Error) Error() string {
	return fmt.Sprintf("tradekit: %d %s: %s", e.Status, e.Code, e.Message)
}

// Check returns r when its status is 2xx, and an [*Error] built from its
// body otherwise; err, a transport error, is returned as it is. r is any
// response type of this package (a pointer to a struct with the
// generated Body and HTTPResponse fields):
//
//	r, err := client.Check(c.GetAssetWithResponse(ctx, id))
func Check[R any](r *R, err error) (*R, error) {
	if err != nil {
		return r, err
	}
	if r == nil {
		return nil, errors.New("tradekit: no response")
	}
	v := reflect.ValueOf(r).Elem()
	res, _ := v.FieldByName("HTTPResponse").Interface().(*http.Response)
	body, _ := v.FieldByName("Body").Interface().([]byte)
	if res == nil {
		return r, errors.New("tradekit: the response has no HTTPResponse")
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return r, nil
	}
	return r, errorOf(res, body)
}

// errorOf decodes the error envelope of an error answer.
func errorOf(res *http.Response, body []byte) *Error {
	e := &Error{Status: res.StatusCode, RequestID: res.Header.Get("X-Request-Id")}
	var env struct {
		Error struct {
			Code, Message string
			Details       map[string]any
		}
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error.Code == "" {
		e.Code, e.Message = http.StatusText(res.StatusCode), strings.TrimSpace(string(body))
		return e
	}
	e.Code, e.Message, e.Details = env.Error.Code, env.Error.Message, env.Error.Details
	return e
}

// pages iterates over every item of a paginated list: fetch returns the
// items and meta of one page.
func pages[T any](ctx context.Context, first int, fetch func(ctx context.Context, page int) ([]T, Meta, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for page, seen := max(first, 1), 0; ; page++ {
			items, meta, err := fetch(ctx, page)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			seen = page * meta.Limit
			if len(items) == 0 || seen >= meta.Total {
				return
			}
		}
	}
}

// Leaders iterates over every leader the listing p selects, page after
// page from p.Page (default 1); p.Limit sets the page size. It stops at
// the first error, which it yields.
func (a *API) Leaders(ctx context.Context, p ListLeadersParams) iter.Seq2[Leader, error] {
	return pages(ctx, first(p.Page), func(ctx context.Context, page int) ([]Leader, Meta, error) {
		p.Page = &page
		r, err := Check(a.ListLeadersWithResponse(ctx, &p))
		if err != nil {
			return nil, Meta{}, err
		}
		if r.JSON200 == nil {
			return nil, Meta{}, errNoJSON
		}
		return r.JSON200.Data, r.JSON200.Meta, nil
	})
}

// Orders iterates over the key owner's orders that p selects, newest
// first, as [API.Leaders] does over leaders.
func (a *API) Orders(ctx context.Context, p ListOrdersParams) iter.Seq2[Order, error] {
	return pages(ctx, first(p.Page), func(ctx context.Context, page int) ([]Order, Meta, error) {
		p.Page = &page
		r, err := Check(a.ListOrdersWithResponse(ctx, &p))
		if err != nil {
			return nil, Meta{}, err
		}
		if r.JSON200 == nil {
			return nil, Meta{}, errNoJSON
		}
		return r.JSON200.Data, r.JSON200.Meta, nil
	})
}

// Notifications iterates over the key owner's notifications that p
// selects, newest first, as [API.Leaders] does over leaders.
func (a *API) Notifications(ctx context.Context, p ListNotificationsParams) iter.Seq2[Notification, error] {
	return pages(ctx, first(p.Page), func(ctx context.Context, page int) ([]Notification, Meta, error) {
		p.Page = &page
		r, err := Check(a.ListNotificationsWithResponse(ctx, &p))
		if err != nil {
			return nil, Meta{}, err
		}
		if r.JSON200 == nil {
			return nil, Meta{}, errNoJSON
		}
		return r.JSON200.Data, r.JSON200.Meta, nil
	})
}

// errNoJSON is the error of a success whose body is not JSON.
var errNoJSON = errors.New("tradekit: a successful answer without a JSON body")

// first returns the page to start from: page, or 1.
func first(page *int) int {
	if page == nil {
		return 1
	}
	return *page
}
