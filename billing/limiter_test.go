package billing_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// counts returns the account's stored minute and day counts at now.
func counts(tb testing.TB, db bun.IDB, userID uuid.UUID, now time.Time) (minute, day int) {
	tb.Helper()
	now = now.UTC()
	d := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	err := db.NewRaw(`SELECT
		COALESCE((SELECT count FROM rate_counters WHERE account_id = ? AND window_kind = 'm' AND window_start = ?), 0),
		COALESCE((SELECT count FROM rate_counters WHERE account_id = ? AND window_kind = 'd' AND window_start = ?), 0)`,
		userID, now.Truncate(time.Minute).Unix(), userID, d.Unix()).Scan(context.Background(), &minute, &day)
	if err != nil {
		tb.Fatal(err)
	}
	return minute, day
}

// queryCounter counts the queries a database handle runs.
type queryCounter struct{ n atomic.Int64 }

func (c *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *queryCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestLimiterLeases: a user far from the limit is counted ahead in
// leases, so a thousand requests take a few dozen round trips; the
// remaining count still falls by one per request; Close gives the unused
// part back, leaving the exact count.
func TestLimiterLeases(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		db := dbtest.MustOpen(t, dsn)
		ctx := context.Background()
		u := mustUser(t, db, "lease@example.com", "business")
		var q queryCounter
		db.AddQueryHook(&q)
		l := billing.NewLimiter(db)
		lim := billing.Limits{PerMinute: 100000, PerDay: 1000000}
		now := time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)
		for i := 1; i <= 1000; i++ {
			use, err := l.Consume(ctx, u.ID, lim, now.Add(time.Duration(i)*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			if !use.Allowed || use.Window != "minute" || use.Remaining != 100000-i {
				t.Fatalf("request %d: %+v, want allowed with %d remaining", i, use, 100000-i)
			}
		}
		if n := q.n.Load(); n > 1000/32 {
			t.Errorf("1,000 requests made %d queries, want leases of up to 64", n)
		}
		if m, d := counts(t, db, u.ID, now); m < 1000 || m > 1000+64 || d != m {
			t.Errorf("stored counts with a lease out: minute %d, day %d; want 1,000 plus at most 64", m, d)
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if m, d := counts(t, db, u.ID, now); m != 1000 || d != 1000 {
			t.Errorf("after Close: minute %d, day %d; want 1,000", m, d)
		}
	})
}

// TestLimiterLeaseEndsWithMinute: what a lease did not use goes back to
// the day when the minute ends, through the next request or Flush.
func TestLimiterLeaseEndsWithMinute(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "minute@example.com", "business")
		l := billing.NewLimiter(db)
		lim := billing.Limits{PerMinute: 1000, PerDay: 10000}
		now := time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)
		consume := func(at time.Time, n int) {
			t.Helper()
			for i := 0; i < n; i++ {
				if use, err := l.Consume(ctx, u.ID, lim, at); err != nil || !use.Allowed {
					t.Fatalf("%+v, %v", use, err)
				}
			}
		}
		consume(now, 5) // 1, then a lease of 62
		if _, d := counts(t, db, u.ID, now); d <= 5 {
			t.Fatalf("day count %d: no lease taken", d)
		}
		next := now.Add(time.Minute)
		consume(next, 1)
		if m, d := counts(t, db, u.ID, next); m != 1 || d != 6 {
			t.Errorf("next minute: minute %d, day %d; want 1 and 6", m, d)
		}
		consume(next, 3)
		if err := l.Flush(ctx, next.Add(59*time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, d := counts(t, db, u.ID, next); d <= 9 {
			t.Errorf("Flush before the minute ended gave the lease back: day %d", d)
		}
		if err := l.Flush(ctx, next.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if m, d := counts(t, db, u.ID, next); m != 4 || d != 9 {
			t.Errorf("after Flush: minute %d, day %d; want 4 and 9", m, d)
		}
	})
}

// fire sends 8×perGoroutine requests of the user at once, from goroutines
// taking turns between the limiters, and returns how many were allowed.
func fire(t *testing.T, ls []*billing.Limiter, userID uuid.UUID, lim billing.Limits, now time.Time, perGoroutine int) int {
	t.Helper()
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		l := ls[i%len(ls)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < perGoroutine; j++ {
				use, err := l.Consume(context.Background(), userID, lim, now)
				if err != nil {
					t.Error(err)
					return
				}
				if use.Allowed {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return int(allowed.Load())
}

// TestConsumeConcurrent fires more requests than the limit from several
// goroutines of two "instances", each with its own connections and
// Limiter: exactly the limit get through.
func TestConsumeConcurrent(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		dbA, dbB := dbtest.MustOpen(t, dsn), dbtest.MustOpen(t, dsn)
		u := mustUser(t, dbA, "race@example.com", "free")
		lim := billing.Limits{PerMinute: 30, PerDay: 1000}
		if got := fire(t, []*billing.Limiter{billing.NewLimiter(dbA), billing.NewLimiter(dbB)}, u.ID, lim, time.Now(), 10); got != 30 {
			t.Errorf("%d of 80 concurrent requests allowed, want 30", got)
		}
	})
}

// TestLimiterLeasesNeverOveradmit runs two "instances" leasing for one
// user: no more than the limit get through, and once the database count is
// full, what was allowed plus what the instances hold is exactly the
// limit.
func TestLimiterLeasesNeverOveradmit(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		dbA, dbB := dbtest.MustOpen(t, dsn), dbtest.MustOpen(t, dsn)
		ls := []*billing.Limiter{billing.NewLimiter(dbA), billing.NewLimiter(dbB)}
		u := mustUser(t, dbA, "leaserace@example.com", "business")
		lim := billing.Limits{PerMinute: 500, PerDay: 100000}
		now := time.Now()
		got := fire(t, ls, u.ID, lim, now, 100)
		if m, _ := counts(t, dbA, u.ID, now); got > 500 || m != 500 {
			t.Fatalf("%d of 800 allowed with the stored count at %d; want at most 500 and 500", got, m)
		}
		if got < 500-2*500/16 {
			t.Errorf("%d of 800 allowed: leases held back more than 1/16 of the limit per instance", got)
		}
		t.Logf("%d of 800 allowed; %d held in unused leases", got, 500-got)
		for _, l := range ls {
			if err := l.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if m, _ := counts(t, dbA, u.ID, now); m != got {
			t.Errorf("after Close the stored count is %d, want the %d allowed", m, got)
		}
	})
}

// TestLimiterRemembersRefusal: past the limit, requests are refused
// from memory for the rest of the minute, with a Retry-After that counts
// down; the next minute asks the database again.
func TestLimiterRemembersRefusal(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		db := dbtest.MustOpen(t, dsn)
		ctx := context.Background()
		u := mustUser(t, db, "knock@example.com", "free")
		var q queryCounter
		db.AddQueryHook(&q)
		l := billing.NewLimiter(db)
		lim := billing.Limits{PerMinute: 3, PerDay: 1000}
		now := time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)
		for i := 0; i < 4; i++ {
			if _, err := l.Consume(ctx, u.ID, lim, now); err != nil {
				t.Fatal(err)
			}
		}
		before := q.n.Load()
		for i := 1; i <= 10; i++ {
			use, err := l.Consume(ctx, u.ID, lim, now.Add(time.Duration(i)*time.Second))
			if err != nil || use.Allowed || use.RetryAfter != time.Duration(60-i)*time.Second {
				t.Fatalf("refused request %d: %+v, %v; want refused, retry after %ds", i, use, err, 60-i)
			}
		}
		if n := q.n.Load() - before; n != 0 {
			t.Errorf("10 refused requests made %d queries, want 0", n)
		}
		if use, err := l.Consume(ctx, u.ID, lim, now.Add(time.Minute)); err != nil || !use.Allowed {
			t.Errorf("next minute: %+v, %v", use, err)
		}
		if m, d := counts(t, db, u.ID, now); m != 3 || d != 4 {
			t.Errorf("stored counts minute %d, day %d; want 3 and 4", m, d)
		}
	})
}
