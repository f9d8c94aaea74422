package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// benchKey creates a user on a plan with limits no benchmark reaches.
func benchKey(b *testing.B, db *bun.DB) (string, billing.Principal) {
	b.Helper()
	ctx := context.Background()
	_, err := db.NewRaw(`INSERT INTO plans (id, slug, name, price, currency, interval, api_requests_per_day,
		api_requests_per_minute, watchlists, portfolios, alerts, formula_cost, backtests, backtest_runs, sort_order)
		VALUES ('5b0c3f4e-2f43-4d36-9a5c-0000000000ff', 'bench', 'Bench', '0', 'USD',
		'month', 2000000000, 2000000000, 0, 0, 0, 0, 1000000, 1000, 99)`).Exec(ctx)
	if err != nil {
		b.Fatal(err)
	}
	key := mustKey(b, db, "bench@example.com", "bench")
	p, err := billing.NewAuthenticator(db, billing.AuthConfig{}).Authenticate(ctx, key, "")
	if err != nil {
		b.Fatal(err)
	}
	return key, p
}

// benchLoopback serves h on a loopback socket and runs b.N GETs (or
// POSTs) of path, reporting p50 and p99 latency beside ns/op.
func benchLoopback(b *testing.B, h http.Handler, method, path, key string) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	benchURL(b, srv.Client(), method, srv.URL+path, key)
}

// benchURL runs b.N requests of method to url with the key, one at a
// time, reporting p50 and p99 latency beside ns/op.
func benchURL(b *testing.B, client *http.Client, method, url, key string) {
	do := func() {
		req, _ := http.NewRequest(method, url, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s %s: %d %s", method, url, res.StatusCode, body)
		}
	}
	do() // warm the connection (and the cache, where there is one)
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		do()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkRequest measures GET /api/v1/billing/plans through the whole
// stack (request id, log, auth, rate limit, handler, envelope), and beside
// it the database work the handler does (read the plans): the difference
// is what the stack adds. The stack's rate limit counts this busy user in
// leases, one upsert per 64 requests, which "rate-limit-upsert" measures
// alone.
func BenchmarkRequest(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		key, p := benchKey(b, db)
		s := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db)
		h := s.Handler()
		req := httptest.NewRequest(http.MethodGet, "/api/v1/billing/plans", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		ctx := context.Background()
		st := billing.NewStore(db)

		b.Run("stack", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
		b.Run("database-only", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := st.Plans(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("rate-limit-upsert", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := st.Consume(ctx, p.UserID, p.Plan.Limits(), time.Now()); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkAuthenticate measures a cached key lookup, the steady state of
// authentication: no database round trip.
func BenchmarkAuthenticate(b *testing.B) {
	db := dbtest.SQLite(b)
	key, _ := benchKey(b, db)
	a := billing.NewAuthenticator(db, billing.AuthConfig{})
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, key, ""); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := a.Authenticate(ctx, key, ""); err != nil {
			b.Fatal(err)
		}
	}
}
