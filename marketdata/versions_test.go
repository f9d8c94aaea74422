package marketdata

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

// queryCounter counts the queries a database handle runs.
type queryCounter struct{ n atomic.Int64 }

func (c *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *queryCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// eventually waits up to 5 s for cond with [testkit.Eventually] and
// returns how long that took, to within the poll's back-off (50 ms).
func eventually(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	testkit.Eventually(t, 5*time.Second, cond, "%s", what)
	return time.Since(start)
}

// TestVersions: on PostgreSQL a listening Versions answers from memory,
// sees another process's price change within milliseconds, and survives
// losing its connection without serving a stale version for longer than
// it takes to notice; on SQLite every call reads the database.
func TestVersions(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		db, other := dbtest.MustOpen(t, dsn), dbtest.MustOpen(t, dsn)
		ctx, cancel := context.WithCancel(context.Background())
		id, ps := mustColumnsAsset(t, db, 10)
		var q queryCounter
		db.AddQueryHook(&q)
		v := NewVersions(db, VersionsConfig{PingInterval: 20 * time.Millisecond, MaxSilence: 500 * time.Millisecond})
		done := make(chan struct{})
		go func() {
			v.Run(ctx)
			close(done)
		}()
		defer func() {
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Error("Run did not return after its context ended")
			}
		}()
		version := func() int64 {
			t.Helper()
			pv, err := v.PriceVersion(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			return pv.Version
		}
		change := func() {
			t.Helper()
			p := ps[len(ps)-1]
			p.Close = p.Close.Add(decimal.NewFromInt(1))
			ps[len(ps)-1] = p
			if err := NewStore(other).SavePrices(context.Background(), []Price{p}); err != nil {
				t.Fatal(err)
			}
		}

		if db.Dialect().Name() != dialect.PG {
			before := q.n.Load()
			first := version()
			version()
			if n := q.n.Load() - before; n != 2 {
				t.Errorf("two calls made %d queries, want 2", n)
			}
			change()
			if got := version(); got != first+1 {
				t.Errorf("version %d after a change, want %d", got, first+1)
			}
			return
		}

		eventually(t, "listening", v.Listening)
		first := version()
		before := q.n.Load()
		for range 100 {
			version()
		}
		if n := q.n.Load() - before; n > 10 { // pings run through db too
			t.Errorf("100 calls of a known version made %d queries", n)
		}

		change()
		took := eventually(t, "change seen", func() bool { return version() == first+1 })
		t.Logf("another process's change seen after %v", took)

		// Kill the listening connection, then change the prices before
		// it can listen again: the notification is lost, yet the change
		// is seen.
		var killed int
		err := other.NewRaw(`SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE query = 'LISTEN "tradekit_prices"'`).Scan(context.Background(), &killed)
		if err != nil || killed != 1 {
			t.Fatalf("terminating the listener: %d, %v", killed, err)
		}
		change()
		took = eventually(t, "change seen after the connection was lost", func() bool { return version() == first+2 })
		t.Logf("change during the outage seen after %v", took)
		eventually(t, "listening again", v.Listening)
		change()
		eventually(t, "change seen after reconnecting", func() bool { return version() == first+3 })
	})
}

// TestVersionsSilence: a Versions that has heard nothing for MaxSilence
// reads the database even if it thinks it listens.
func TestVersionsSilence(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		id, _ := mustColumnsAsset(t, db, 3)
		v := NewVersions(db, VersionsConfig{})
		v.trusted, v.heard = true, time.Now()
		v.known[id] = PriceVersion{Version: 999}
		if pv, err := v.PriceVersion(context.Background(), id); err != nil || pv.Version != 999 {
			t.Fatalf("trusted: %+v, %v; want the known version 999", pv, err)
		}
		v.heard = time.Now().Add(-4 * time.Second)
		if pv, err := v.PriceVersion(context.Background(), id); err != nil || pv.Version == 999 {
			t.Errorf("after 4 s of silence: %+v, %v; want the stored version", pv, err)
		}
	})
}
