package alpaca

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tradekit/tradekit"
)

// maxErrorBody is how much of an error answer's body the client reads.
const maxErrorBody = 64 << 10

// APIError is an answer of the trading API, or of an OAuth endpoint,
// with a status other than success. Code and Message come from the body:
// Alpaca's {"code": 40110000, "message": "request is not authorized"},
// or RFC 6749's {"error": "invalid_client", "error_description": "…"}.
// When the body has neither, as when a proxy answers with an HTML page,
// Code is 0 and Message is the status text followed by the start of the
// body, its white space collapsed.
type APIError struct {
	StatusCode int    // the HTTP status, e.g. 422
	Code       int    // Alpaca's error code, e.g. 42210000; 0 if the body had none
	Message    string // the body's message, e.g. "qty must be > 0"
	// Wait is how long a 429 asked to wait before the next request: the
	// time left until its X-RateLimit-Reset, else its Retry-After, at
	// most five minutes (see waitOf); 0 for any other answer.
	Wait time.Duration
}

// RetryAfter returns Wait: see [brokers.RetryAfter].
func (e *APIError) RetryAfter() time.Duration { return e.Wait }

// Error returns "alpaca: <status> <code>: <message>", leaving out the
// code when it is 0.
func (e *APIError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("alpaca: %d %d: %s", e.StatusCode, e.Code, e.Message)
	}
	return fmt.Sprintf("alpaca: %d: %s", e.StatusCode, e.Message)
}

// Unwrap returns the Tradekit error kind of the status:
// [tradekit.ErrUnauthorized] for 401 and 403, [tradekit.ErrNotFound] for
// 404, [tradekit.ErrRejected] for 422, and [tradekit.ErrUnavailable] for
// 429 and 5xx. It returns nil for any other status, which the client's
// own requests should never meet, so that a server reports it as an
// internal error.
func (e *APIError) Unwrap() error {
	switch s := e.StatusCode; {
	case s == http.StatusUnauthorized, s == http.StatusForbidden:
		return tradekit.ErrUnauthorized
	case s == http.StatusNotFound:
		return tradekit.ErrNotFound
	case s == http.StatusUnprocessableEntity:
		return tradekit.ErrRejected
	case s == http.StatusTooManyRequests, s >= 500 && s <= 599:
		return tradekit.ErrUnavailable
	}
	return nil
}

// readAPIError reads and closes the body of an unsuccessful answer.
func readAPIError(resp *http.Response) *APIError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody)) // on a read error, keep what came
	e := newAPIError(resp.StatusCode, body)
	if resp.StatusCode == http.StatusTooManyRequests {
		e.Wait = waitOf(resp.Header, time.Now())
	}
	return e
}

// maxWait bounds the wait the client passes on from a 429: a rate limit
// of requests a minute resets within one.
const maxWait = 5 * time.Minute

// waitOf returns how long a 429's headers h ask to wait, at now: until
// X-RateLimit-Reset (Unix seconds, Alpaca's and the paper broker's) when
// it lies ahead, to the instant; else Retry-After, in whole seconds;
// else a second, for a reset the clocks place in the past; at most
// maxWait; 0 when h says none of them. Retry-After rounds up: an order
// refused early in a minute, checked again a second after the minute's
// reset, would be past the tracker's minute to send it.
func waitOf(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	reset, rerr := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	retry, aerr := strconv.Atoi(h.Get("Retry-After"))
	switch {
	case rerr == nil && reset > 0 && time.Unix(reset, 0).After(now):
		d = time.Unix(reset, 0).Sub(now)
	case aerr == nil && retry >= 0:
		d = max(time.Duration(retry)*time.Second, time.Second)
	case rerr == nil && reset > 0:
		d = time.Second
	default:
		return 0
	}
	return min(d, maxWait)
}

// newAPIError decodes an error body of either shape APIError describes.
func newAPIError(status int, body []byte) *APIError {
	e := &APIError{StatusCode: status}
	var b struct {
		Code        int    `json:"code"`
		Message     string `json:"message"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(body, &b) == nil {
		e.Code = b.Code
		switch {
		case b.Message != "":
			e.Message = b.Message
		case b.Error != "" && b.Description != "":
			e.Message = b.Error + ": " + b.Description
		case b.Error != "":
			e.Message = b.Error
		}
		if e.Message != "" {
			return e
		}
	}
	e.Message = http.StatusText(status)
	if e.Message == "" {
		e.Message = "unexpected status"
	}
	if s := strings.Join(strings.Fields(string(body)), " "); s != "" && e.Code == 0 {
		what := "unexpected body"
		if !json.Valid(body) {
			what = "body is not JSON"
		}
		e.Message += fmt.Sprintf(" (%s: %s)", what, tradekit.Quote(s))
	}
	return e
}
