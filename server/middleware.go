package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bunrouter"
	semconv "go.opentelemetry.io/otel/semconv/v1.17.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
)

type ctxKey int

const (
	infoKey ctxKey = iota
	principalKey
)

// requestInfo is what the request log learns while the request runs.
type requestInfo struct {
	id     string
	userID string
	route  string // the route pattern or fixed label of the metrics; "" for none
}

// setRoute records route as the route label of r's metrics and span.
func setRoute(r *http.Request, route string) {
	if info, ok := r.Context().Value(infoKey).(*requestInfo); ok {
		info.route = route
	}
	span := trace.SpanFromContext(r.Context())
	span.SetName(r.Method + " " + route)
	span.SetAttributes(semconv.HTTPRoute(route))
}

// requestID returns the id of the request ctx belongs to.
func requestID(ctx context.Context) string {
	if info, ok := ctx.Value(infoKey).(*requestInfo); ok {
		return info.id
	}
	return ""
}

// principal returns the key owner of an authenticated request.
func principal(ctx context.Context) billing.Principal {
	p, _ := ctx.Value(principalKey).(billing.Principal)
	return p
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests gives each request an id, logs it once done, counts it in
// the metrics, and turns a panic into a 500 INTERNAL.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.metrics.started()
		defer s.metrics.finished()
		info := &requestInfo{id: r.Header.Get("X-Request-Id")}
		if !saneRequestID(info.id) {
			info.id = s.newRequestID()
		}
		w.Header().Set("X-Request-Id", info.id)
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), infoKey, info))
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic", "request_id", info.id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if sw.status == 0 {
					s.writeJSON(sw, http.StatusInternalServerError,
						errorBody{Error: errorJSON{Code: "INTERNAL", Message: "internal error"}})
				}
			}
			elapsed := time.Since(start)
			attrs := []any{"request_id", info.id, "method", r.Method, "path", r.URL.Path,
				"status", sw.status, "bytes", sw.bytes, "duration_ms", float64(elapsed.Microseconds()) / 1000,
				"user_id", info.userID}
			if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
				attrs = append(attrs, "trace_id", sc.TraceID().String())
			}
			s.log.Info("request", attrs...)
			s.metrics.request(or(info.route, routeUnmatched), r.Method, cmp.Or(sw.status, http.StatusOK), elapsed)
		}()
		next.ServeHTTP(sw, r)
	})
}

// saneRequestID reports whether a caller's request id may be reused:
// 1 to 128 letters, digits, '-', '_' or '.'.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// newRequestID returns this instance's random prefix and a sequence
// number: unique across instances, and cheap.
func (s *Server) newRequestID() string {
	return s.idPrefix + strconv.FormatUint(s.seq.Add(1), 36)
}

func newIDPrefix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b) + "-"
}

// authError returns the answer to a failed authentication.
func authError(w http.ResponseWriter, err error) error {
	var te *billing.ThrottledError
	switch {
	case errors.As(err, &te):
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(te.RetryAfter.Seconds()))))
		return errorf(tradekit.ErrRateLimited, "%s", te)
	case errors.Is(err, tradekit.ErrUnauthorized):
		return errorf(tradekit.ErrUnauthorized, "invalid API key")
	}
	return err
}

// clientAddress names the client of r for counting its failed
// authentications, as the dashboard's sign-in throttle does: see
// [billing.ClientAddress].
func clientAddress(r *http.Request) string {
	return billing.ClientAddress(r.RemoteAddr)
}

// authenticate resolves the Bearer key to its principal and counts the
// request against the plan limits of the owner's account.
func (s *Server) authenticate(next bunrouter.HandlerFunc) bunrouter.HandlerFunc {
	return func(w http.ResponseWriter, req bunrouter.Request) error {
		if !s.routeSet[routeKey{req.Method, req.Route()}] {
			// The router runs its 405 behind the middleware of the
			// path's group: answer it as every 405 is, key or not.
			return next(w, req)
		}
		ctx := req.Context()
		h := req.Header.Get("Authorization")
		if h == "" {
			return errorf(tradekit.ErrUnauthorized, "missing API key: send the header Authorization: Bearer <key>")
		}
		key, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			return errorf(tradekit.ErrUnauthorized, "invalid Authorization header: want Bearer <key>")
		}
		p, err := s.auth.Authenticate(ctx, strings.TrimSpace(key), clientAddress(req.Request))
		if err != nil {
			return authError(w, err)
		}
		if info, ok := ctx.Value(infoKey).(*requestInfo); ok {
			info.userID = p.UserID.String()
		}

		now := s.now()
		// Counted per account: invited members share the plan's allowance.
		use, err := s.limiter.Consume(ctx, p.AccountID, p.Plan.Limits(), now)
		if err != nil {
			return err
		}
		setRateLimitHeaders(w.Header(), p.Plan.Limits(), use, now)
		if !use.Allowed {
			s.metrics.limited(p.Plan.Slug)
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(use.RetryAfter.Seconds()))))
			return errorf(tradekit.ErrRateLimited, "rate limit of the %s plan spent: %d requests per %s; retry in %s",
				p.Plan.Slug, use.Limit, use.Window, use.RetryAfter.Round(time.Second))
		}
		return next(w, req.WithContext(context.WithValue(ctx, principalKey, p)))
	}
}

// setRateLimitHeaders writes the rate-limit headers of a request counted
// at now against the plan limits lim: X-RateLimit-Limit, -Remaining and
// -Reset (Unix seconds) for the tighter window (docs/conventions.md,
// "Rate-limit headers"), and the fields of the IETF
// draft "RateLimit header fields for HTTP"
// (draft-ietf-httpapi-ratelimit-headers-09): RateLimit-Policy lists both
// windows' quotas, each a policy named after its window with q (the
// quota) and w (the window, in seconds); RateLimit gives the tighter
// window's policy with r (the requests remaining) and t (the seconds
// until it resets). For example:
//
//	RateLimit-Policy: "minute";q=60;w=60, "day";q=1000;w=86400
//	RateLimit: "minute";r=59;t=42
func setRateLimitHeaders(h http.Header, lim billing.Limits, use billing.Usage, now time.Time) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(use.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(use.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(use.Reset.Unix(), 10))
	h.Set("RateLimit-Policy", fmt.Sprintf(`"minute";q=%d;w=60, "day";q=%d;w=86400`, lim.PerMinute, lim.PerDay))
	reset := max(int64(math.Ceil(use.Reset.Sub(now).Seconds())), 0)
	h.Set("RateLimit", fmt.Sprintf(`"%s";r=%d;t=%d`, use.Window, max(use.Remaining, 0), reset))
}
