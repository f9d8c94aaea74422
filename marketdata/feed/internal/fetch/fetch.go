package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata/feed"
)

// Config configures a [Client].
type Config struct {
	// Provider names the provider in errors: "massive".
	Provider string
	// HTTP is the client requests go through; nil is a client with a
	// 60-second timeout.
	HTTP *http.Client
	// Auth sets the credentials on each request.
	Auth func(*http.Request)
	// Message extracts the provider's message from an error body; "" when
	// it finds none (the body's first 200 bytes are used instead).
	Message func(body []byte) string
	// PerMinute, when positive, spaces requests so that at most PerMinute
	// start in any minute.
	PerMinute int
	// Retries is the number of retries of a 429, a 5xx or a network
	// failure; 0 is 5, negative none.
	Retries int
	// Backoff is the first wait between retries, doubled each time up to
	// a minute, when the answer gives no Retry-After; 0 is one second.
	Backoff time.Duration
	// Sleep waits d or until ctx is done; nil sleeps on a timer. Tests
	// record the waits with it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Observe, when set, is called after each request with its duration
	// and status (0 for a network failure).
	Observe func(d time.Duration, status int)
}

// Client sends GET requests to a provider. It is safe for concurrent use.
type Client struct {
	cfg Config

	mu      sync.Mutex
	next    time.Time // the earliest start of the next request under PerMinute
	refused error     // the first 401/403, returned for every later request
}

// New returns a Client with cfg.
func New(cfg Config) *Client {
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 60 * time.Second}
	}
	if cfg.Retries == 0 {
		cfg.Retries = 5
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	return &Client{cfg: cfg}
}

// StatusError is a provider's error answer: its HTTP status and message.
// It wraps [feed.ErrAuth] for 401 and 403, [tradekit.ErrNotFound] for 404,
// and [tradekit.ErrInvalid] for another 4xx.
type StatusError struct {
	Provider string
	Status   int
	// Path is the request's path, without its query (which may hold a key).
	Path    string
	Message string
}

// Error implements error: "massive: GET /v2/aggs/…: 403 Forbidden: You are not entitled to this data".
func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: GET %s: %d %s: %s", e.Provider, e.Path, e.Status, http.StatusText(e.Status), e.Message)
}

// Unwrap returns the error kind of the status.
func (e *StatusError) Unwrap() error {
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return feed.ErrAuth
	case e.Status == http.StatusNotFound:
		return tradekit.ErrNotFound
	case e.Status >= 400 && e.Status < 500:
		return tradekit.ErrInvalid
	}
	return nil
}

// GetJSON sends GET u and decodes the JSON answer into v. See [Client.Get].
func (c *Client) GetJSON(ctx context.Context, u string, v any) error {
	body, err := c.Get(ctx, u)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: GET %s: decode the answer: %w", c.cfg.Provider, pathOf(u), err)
	}
	return nil
}

// Get sends GET u and returns the body of a 2xx answer. A 429 is retried
// after its Retry-After (else the backoff), a 5xx or a network failure
// after the backoff, up to Config.Retries times. Another status returns a
// *[StatusError]; after a 401 or 403 every call returns that same error
// without a request.
func (c *Client) Get(ctx context.Context, u string) ([]byte, error) {
	wait := c.cfg.Backoff
	for attempt := 0; ; attempt++ {
		if err := c.refusal(); err != nil {
			return nil, err
		}
		if err := c.pace(ctx); err != nil {
			return nil, err
		}
		body, status, retryAfter, err := c.do(ctx, u)
		if err == nil && status >= 200 && status < 300 {
			return body, nil
		}
		retry := err != nil || status == http.StatusTooManyRequests || status >= 500
		if err == nil {
			err = &StatusError{Provider: c.cfg.Provider, Status: status, Path: pathOf(u), Message: c.message(body)}
		}
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			c.mu.Lock()
			if c.refused == nil {
				c.refused = err
			}
			c.mu.Unlock()
			return nil, err
		}
		if !retry || attempt >= c.cfg.Retries || ctx.Err() != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		d := wait
		if retryAfter > 0 {
			d = retryAfter
		}
		if err := c.cfg.Sleep(ctx, d); err != nil {
			return nil, err
		}
		wait = min(2*wait, time.Minute)
	}
}

// refusal returns the remembered 401/403, if any.
func (c *Client) refusal() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// pace waits for the request's slot under Config.PerMinute.
func (c *Client) pace(ctx context.Context) error {
	if c.cfg.PerMinute <= 0 {
		return nil
	}
	interval := time.Minute / time.Duration(c.cfg.PerMinute)
	c.mu.Lock()
	now := time.Now()
	start := now
	if c.next.After(now) {
		start = c.next
	}
	c.next = start.Add(interval)
	c.mu.Unlock()
	if d := start.Sub(now); d > 0 {
		return c.cfg.Sleep(ctx, d)
	}
	return nil
}

// maxBody bounds the answers read: a day of the whole US market is a few
// megabytes.
const maxBody = 256 << 20

// do sends one request and returns the body, the status and the wait that
// a Retry-After asks for.
func (c *Client) do(ctx context.Context, u string) ([]byte, int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: GET %s: %w", c.cfg.Provider, pathOf(u), err)
	}
	req.Header.Set("Accept", "application/json")
	if c.cfg.Auth != nil {
		c.cfg.Auth(req)
	}
	start := time.Now()
	resp, err := c.cfg.HTTP.Do(req)
	if err != nil {
		c.observe(start, 0)
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may carry a key
		}
		return nil, 0, 0, fmt.Errorf("%s: GET %s: %w", c.cfg.Provider, pathOf(u), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	c.observe(start, resp.StatusCode)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: GET %s: read the answer: %w", c.cfg.Provider, pathOf(u), err)
	}
	return body, resp.StatusCode, retryAfter(resp.Header.Get("Retry-After"), time.Now()), nil
}

func (c *Client) observe(start time.Time, status int) {
	if c.cfg.Observe != nil {
		c.cfg.Observe(time.Since(start), status)
	}
}

// message returns the provider's message in an error body.
func (c *Client) message(body []byte) string {
	if c.cfg.Message != nil {
		if m := c.cfg.Message(body); m != "" {
			return m
		}
	}
	s := strings.TrimSpace(string(body[:min(len(body), 200)]))
	if s == "" {
		return "(empty answer)"
	}
	return s
}

// retryAfter parses a Retry-After header, seconds or an HTTP date, into a
// wait of at most ten minutes; 0 when absent or unparsable.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(h); err == nil {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), 10*time.Minute)
}

// pathOf returns the path of u, without its query.
func pathOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(bad URL)"
	}
	return p.Path
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
