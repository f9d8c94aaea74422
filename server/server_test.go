package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/server"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testPasswords are cheap Argon2id parameters for the tests' password
// hashes and sign-ins: what the tests check is not a hash's cost, and at
// the default cost the hashes were half the package's CPU time.
var testPasswords = billing.PasswordParams{Memory: 64, Time: 1, Threads: 1}

// quietLogger discards the request log.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// mustKey creates a user on the plan and returns a fresh API key for it.
func mustKey(tb testing.TB, db bun.IDB, email, plan string) string {
	tb.Helper()
	ctx := context.Background()
	st := billing.NewStore(db)
	p, err := st.Plan(ctx, plan)
	if err != nil {
		tb.Fatal(err)
	}
	u := billing.User{Email: email, Name: "Test", PlanID: p.ID}
	if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
		tb.Fatal(err)
	}
	_, key, err := st.CreateKey(ctx, u.ID, "test", time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

// response is a recorded response with its decoded body.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// get sends GET path with the key (none when empty) to h.
func get(tb testing.TB, h http.Handler, path, key string) response {
	tb.Helper()
	return send(tb, h, http.MethodGet, path, key)
}

// send sends method path with the key (none when empty) to h, checks the
// exchange against the OpenAPI document (see checkExchange) and decodes
// the JSON body.
func send(tb testing.TB, h http.Handler, method, path, key string) response {
	tb.Helper()
	return exchange(tb, h, method, path, key, true)
}

// sendUnchecked is send without the OpenAPI check, for the few tests that
// make the server answer outside the document on purpose (data corrupted
// in the database).
func sendUnchecked(tb testing.TB, h http.Handler, method, path, key string) response {
	tb.Helper()
	return exchange(tb, h, method, path, key, false)
}

func exchange(tb testing.TB, h http.Handler, method, path, key string, check bool) response {
	tb.Helper()
	req := httptest.NewRequest(method, path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if check {
		checkExchange(tb, req, rec.Code, rec.Header(), rec.Body.Bytes())
	}
	r := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if err := json.Unmarshal(rec.Body.Bytes(), &r.body); err != nil {
		tb.Fatalf("%s %s: body is not a JSON object: %v\n%s", method, path, err, r.raw)
	}
	return r
}

// errorCode returns error.code of an error envelope.
func (r response) errorCode() string {
	e, _ := r.body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func TestPlans(t *testing.T) {
	t.Parallel()
	// The free and pro plans are section 8 of the spec, number for number.
	const want = `{"data":[
	 {"id":"5b0c3f4e-2f43-4d36-9a5c-000000000001","name":"Free","slug":"free","price":0,"currency":"USD","interval":"month",
	  "features":{"apiRequestsPerDay":1000,"apiRequestsPerMinute":30,"watchlists":1,"portfolios":1,"alerts":5,"formulaCost":2000,"backtests":10,"backtestRuns":1}},
	 {"id":"5b0c3f4e-2f43-4d36-9a5c-000000000002","name":"Pro","slug":"pro","price":29,"currency":"USD","interval":"month",
	  "features":{"apiRequestsPerDay":10000,"apiRequestsPerMinute":120,"watchlists":10,"portfolios":5,"alerts":50,"formulaCost":50000,"backtests":100,"backtestRuns":2}},
	 {"id":"5b0c3f4e-2f43-4d36-9a5c-000000000003","name":"Business","slug":"business","price":99,"currency":"USD","interval":"month",
	  "features":{"apiRequestsPerDay":100000,"apiRequestsPerMinute":600,"watchlists":50,"portfolios":25,"alerts":500,"formulaCost":200000,"backtests":1000,"backtestRuns":4}}]}`
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "plans@example.com", "free")
		r := get(t, h, "/api/v1/billing/plans", key)
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.raw)
		}
		var wantBody map[string]any
		json.Unmarshal([]byte(want), &wantBody)
		if diff := cmp.Diff(wantBody, r.body); diff != "" {
			t.Errorf("plans (-want +got):\n%s", diff)
		}
		if !strings.Contains(r.raw, `"price":29,`) {
			t.Errorf("price is not the JSON number 29: %s", r.raw)
		}
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-Id"} {
			if r.header.Get(h) == "" {
				t.Errorf("header %s missing", h)
			}
		}
	})
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		good := mustKey(t, db, "auth@example.com", "free")
		tests := []struct {
			name, header string
		}{
			{"missing", ""},
			{"not bearer", "Basic " + good},
			{"wrong key", "Bearer tk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
			{"garbage", "Bearer hello"},
			{"truncated", "Bearer " + good[:len(good)-1]},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				req := httptest.NewRequest(http.MethodGet, "/api/v1/billing/plans", nil)
				if tt.header != "" {
					req.Header.Set("Authorization", tt.header)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				checkExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
				var body map[string]map[string]any
				json.Unmarshal(rec.Body.Bytes(), &body)
				if rec.Code != http.StatusUnauthorized || body["error"]["code"] != "UNAUTHORIZED" || body["error"]["message"] == "" {
					t.Errorf("got %d %s, want 401 UNAUTHORIZED envelope", rec.Code, rec.Body)
				}
				if rec.Header().Get("X-RateLimit-Limit") != "" {
					t.Error("rate-limit headers on an unauthenticated response")
				}
			})
		}
	})
}

func TestNotFoundAndMethod(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	if r := get(t, h, "/api/v1/no-such-thing", ""); r.status != 404 || r.errorCode() != "NOT_FOUND" {
		t.Errorf("unknown route: %d %s", r.status, r.raw)
	}
	req := httptest.NewRequest(http.MethodDelete, "/healthz", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /healthz: %d %s", rec.Code, rec.Body)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		if r := get(t, h, "/healthz", ""); r.status != 200 || r.body["status"] != "ok" {
			t.Errorf("/healthz: %d %s", r.status, r.raw)
		}
		if r := get(t, h, "/readyz", ""); r.status != 200 {
			t.Errorf("/readyz: %d %s", r.status, r.raw)
		}
	})
}

// TestRequestID checks that the id in X-Request-Id is the one in the log
// line, and that a caller's sane id is kept.
func TestRequestID(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	h := server.New(server.Config{Logger: log}, db).Handler()

	r := get(t, h, "/healthz", "")
	id := r.header.Get("X-Request-Id")
	if id == "" {
		t.Fatal("no X-Request-Id")
	}
	mu.Lock()
	logged := buf.String()
	mu.Unlock()
	if !strings.Contains(logged, `"request_id":"`+id+`"`) || !strings.Contains(logged, `"status":200`) {
		t.Errorf("log does not hold request %s:\n%s", id, logged)
	}

	for in, keep := range map[string]bool{"abc-123.X_y": true, "bad id": false, strings.Repeat("a", 129): false} {
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		req.Header.Set("X-Request-Id", in)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
		if got := rec.Header().Get("X-Request-Id"); (got == in) != keep || got == "" {
			t.Errorf("caller id %q: response id %q, keep=%v", in, got, keep)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(b)
}

// TestRateLimit sends 31 requests within a minute on the free plan: the
// last gets 429 with Retry-After.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		now := time.Date(2026, 11, 22, 9, 30, 15, 0, time.UTC)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Now: func() time.Time { return now }}, db).Handler()
		key := mustKey(t, db, "limit@example.com", "free")
		for i := 1; i <= 30; i++ {
			r := get(t, h, "/api/v1/billing/plans", key)
			if r.status != 200 {
				t.Fatalf("request %d: %d %s", i, r.status, r.raw)
			}
			if got := r.header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(30-i) {
				t.Fatalf("request %d: X-RateLimit-Remaining %s, want %d", i, got, 30-i)
			}
			// The IETF draft's fields, beside X-RateLimit-*: the free
			// plan's two windows, and what is left of the tighter one,
			// which resets in 45 s.
			if got, want := r.header.Get("RateLimit"), fmt.Sprintf(`"minute";r=%d;t=45`, 30-i); got != want {
				t.Fatalf("request %d: RateLimit %q, want %q", i, got, want)
			}
			if got, want := r.header.Get("RateLimit-Policy"), `"minute";q=30;w=60, "day";q=1000;w=86400`; got != want {
				t.Fatalf("request %d: RateLimit-Policy %q, want %q", i, got, want)
			}
		}
		r := get(t, h, "/api/v1/billing/plans", key)
		if r.status != http.StatusTooManyRequests || r.errorCode() != "RATE_LIMITED" {
			t.Fatalf("31st request: %d %s", r.status, r.raw)
		}
		reset := now.Truncate(time.Minute).Add(time.Minute)
		want := map[string]string{
			"Retry-After":           "45",
			"X-RateLimit-Limit":     "30",
			"X-RateLimit-Remaining": "0",
			"X-RateLimit-Reset":     strconv.FormatInt(reset.Unix(), 10),
			"RateLimit":             `"minute";r=0;t=45`,
			"RateLimit-Policy":      `"minute";q=30;w=60, "day";q=1000;w=86400`,
		}
		for k, v := range want {
			if got := r.header.Get(k); got != v {
				t.Errorf("31st request: %s = %q, want %q", k, got, v)
			}
		}
		now = reset // a new minute
		if r := get(t, h, "/api/v1/billing/plans", key); r.status != 200 {
			t.Errorf("next minute: %d %s", r.status, r.raw)
		}
	})
}

// TestRateLimitSharedByInstances runs two servers with their own
// connection pools on one database: together they allow 30 requests.
func TestRateLimitSharedByInstances(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		// One clock for both, stopped: all requests fall in one minute.
		now := func() time.Time { return time.Date(2026, 11, 22, 9, 30, 15, 0, time.UTC) }
		a := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Now: now}, dbtest.MustOpen(t, dsn)).Handler()
		db := dbtest.MustOpen(t, dsn)
		b := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Now: now}, db).Handler()
		key := mustKey(t, db, "shared@example.com", "free")
		ok := 0
		for i := 0; i < 40; i++ {
			h := a
			if i%2 == 1 {
				h = b
			}
			switch r := get(t, h, "/api/v1/billing/plans", key); r.status {
			case 200:
				ok++
			case 429:
			default:
				t.Fatalf("request %d: %d %s", i, r.status, r.raw)
			}
		}
		if ok != 30 {
			t.Errorf("%d of 40 requests through two instances allowed, want 30", ok)
		}
	})
}

// TestRevokedKeyAcrossInstances revokes a key on instance a: a refuses it
// at once, b within 5 seconds.
func TestRevokedKeyAcrossInstances(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		dbA, dbB := dbtest.MustOpen(t, dsn), dbtest.MustOpen(t, dsn)
		a := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, dbA)
		b := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, dbB)
		go b.Maintain(ctx)
		key := mustKey(t, dbA, "revoke@example.com", "pro")
		for _, s := range []*server.Server{a, b} {
			if r := get(t, s.Handler(), "/api/v1/billing/plans", key); r.status != 200 {
				t.Fatalf("before revoking: %d %s", r.status, r.raw)
			}
		}
		p, err := a.Authenticator().Authenticate(ctx, key, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Authenticator().Revoke(ctx, p.KeyID); err != nil {
			t.Fatal(err)
		}
		revoked := time.Now()
		if r := get(t, a.Handler(), "/api/v1/billing/plans", key); r.status != 401 {
			t.Errorf("instance a after revoking: %d, want 401 at once", r.status)
		}
		testkit.Eventually(t, 5*time.Second, func() error {
			if r := get(t, b.Handler(), "/api/v1/billing/plans", key); r.status != 401 {
				return fmt.Errorf("instance b still accepts the key: %d", r.status)
			}
			return nil
		}, "instance b to refuse the revoked key")
		t.Logf("instance b refused the key %v after it was revoked", time.Since(revoked).Round(time.Millisecond))
	})
}

// TestDatabaseOutage stops PostgreSQL under a running server: requests get
// 503 UNAVAILABLE and /readyz 503; once it is back the server recovers
// without a restart.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	pg, err := dbtest.StartServer()
	if err != nil {
		dbtest.Unavailable(t, err)
	}
	defer pg.Close()
	db := dbtest.MustOpen(t, pg.DSN("postgres"))
	key := mustKey(t, db, "outage@example.com", "pro")
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	if r := get(t, h, "/api/v1/billing/plans", key); r.status != 200 {
		t.Fatalf("before the outage: %d %s", r.status, r.raw)
	}

	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/billing/plans", "/readyz"} {
		r := get(t, h, path, key)
		if r.status != http.StatusServiceUnavailable || r.errorCode() != "UNAVAILABLE" || r.header.Get("Retry-After") == "" {
			t.Errorf("%s during the outage: %d %v %s", path, r.status, r.header, r.raw)
		}
	}
	if r := get(t, h, "/healthz", ""); r.status != 200 {
		t.Errorf("/healthz during the outage: %d", r.status)
	}

	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, func() error {
		for _, path := range []string{"/readyz", "/api/v1/billing/plans"} {
			if r := get(t, h, path, key); r.status != 200 {
				return fmt.Errorf("%s: still %d %s", path, r.status, r.raw)
			}
		}
		return nil
	}, "the server to recover after the outage")
}

// TestAuthFailureBudget checks that one address's failed authentications
// are bounded: past the budget it gets 429 without a database lookup,
// while keys already cached keep working and other addresses, valid keys
// not yet cached included, are unharmed.
func TestAuthFailureBudget(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Auth: billing.AuthConfig{FailuresPerMinute: 3}}, db).Handler()
		good := mustKey(t, db, "budget@example.com", "business")
		from := func(addr, key string) response {
			t.Helper()
			req := httptest.NewRequest(http.MethodGet, "/api/v1/billing/plans", nil)
			req.RemoteAddr = addr
			req.Header.Set("Authorization", "Bearer "+key)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			checkExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
			r := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
			json.Unmarshal(rec.Body.Bytes(), &r.body)
			return r
		}
		// The budget counts failures in the current UTC minute: a sequence
		// that a minute's end cut in two is run again, from another
		// address, rather than judged.
		inOneMinute := func(run func(try int)) {
			for try := 0; ; try++ {
				minute := time.Now().Unix() / 60
				run(try)
				if time.Now().Unix()/60 == minute {
					return
				}
			}
		}
		const neighbour = "203.0.113.8:4000"
		random := func(i int) string { return "tk_" + strings.Repeat(string(rune('a'+i)), 40) } // well formed, unknown
		var attacker string
		var failures [4]response
		var late response // a valid key no one has used yet, from the throttled address
		inOneMinute(func(try int) {
			attacker = fmt.Sprintf("203.0.113.%d:4000", 7+try*2)
			if r := from(attacker, good); r.status != 200 { // cached from now on
				t.Fatalf("good key: %d %s", r.status, r.raw)
			}
			for i := range failures {
				failures[i] = from(attacker, random(i))
			}
			late = from(attacker, mustKey(t, db, fmt.Sprintf("late%d@example.com", try), "business"))
		})
		for i, r := range failures[:3] {
			if r.status != 401 {
				t.Errorf("failure %d: %d %s, want 401", i+1, r.status, r.raw)
			}
		}
		if r := failures[3]; r.status != 429 || r.errorCode() != "RATE_LIMITED" || r.header.Get("Retry-After") == "" {
			t.Errorf("failure 4: %d %s, want 429 with Retry-After", r.status, r.raw)
		}
		if r := from(attacker, good); r.status != 200 {
			t.Errorf("the cached good key from the throttled address: %d %s", r.status, r.raw)
		}
		if r := from(neighbour, random(5)); r.status != 401 {
			t.Errorf("another address: %d %s, want 401", r.status, r.raw)
		}
		// A valid key no one has used yet works from another address (and
		// was refused unread from the throttled one, above).
		if r := from(neighbour, mustKey(t, db, "neighbour@example.com", "business")); r.status != 200 {
			t.Errorf("another address's valid uncached key: %d %s, want 200", r.status, r.raw)
		}
		if late.status != 429 {
			t.Errorf("a valid uncached key from the throttled address: %d %s, want 429", late.status, late.raw)
		}
		// IPv6 addresses are counted by /64.
		var fourth response
		inOneMinute(func(try int) {
			for i := range 3 {
				from(fmt.Sprintf("[2001:db8:1:%x::%x]:4000", 2+try, i+2), random(i))
			}
			fourth = from(fmt.Sprintf("[2001:db8:1:%x::1]:4000", 2+try), random(9))
		})
		if fourth.status != 429 {
			t.Errorf("a fourth failure from one /64: %d %s, want 429", fourth.status, fourth.raw)
		}
	})
}
