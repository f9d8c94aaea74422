package copytrading_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

// runWait is how long the tests of Run wait for it: far less than the
// copy interval they set, so that what Run does in time it did because
// it was woken.
const (
	runWait     = 5 * time.Second
	runInterval = time.Minute
)

// running is a Service running Run, with the copies it placed.
type running struct {
	placed chan connect.OrderInput
	cancel context.CancelFunc
	done   chan struct{}
}

// startRun starts s.Run with p, which must have no PlaceOrderFn; stop
// it with stop.
func startRun(s *copytrading.Service, p *placer) *running {
	r := &running{placed: make(chan connect.OrderInput, 10), done: make(chan struct{})}
	p.PlaceOrderFn = func(_ context.Context, userID uuid.UUID, in connect.OrderInput) (connect.Placement, error) {
		r.placed <- in
		return connect.Placement{Order: connect.Order{ID: orderIDOf(in.ClientOrderID), UserID: userID, Status: brokers.Pending}}, nil
	}
	var ctx context.Context
	ctx, r.cancel = context.WithCancel(context.Background())
	go func() {
		defer close(r.done)
		s.Run(ctx)
	}()
	return r
}

// mustCopy waits for Run's next copy, which must be of the fill.
func (r *running) mustCopy(tb testing.TB, follow uuid.UUID, fill string, since time.Time) {
	tb.Helper()
	select {
	case in := <-r.placed:
		if want := copytrading.CopyOrderID(follow, fill); in.ClientOrderID != want {
			tb.Errorf("Run copied %s, want the copy of %s (%s)", in.ClientOrderID, fill, want)
		}
		tb.Logf("%s copied %v after the wake-up", fill, time.Since(since))
	case <-time.After(runWait):
		tb.Fatalf("Run did not copy %s within %v", fill, runWait)
	}
}

// stop cancels Run's context and waits for Run to return.
func (r *running) stop(tb testing.TB) {
	tb.Helper()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(runWait):
		tb.Fatalf("Run did not return within %v of its context's end", runWait)
	}
}

// listeners returns how many sessions on db's PostgreSQL database are
// listening, their LISTEN done.
func listeners(tb testing.TB, db bun.IDB) int {
	tb.Helper()
	var n int
	err := db.NewRaw("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle' AND query LIKE 'LISTEN %'").
		Scan(context.Background(), &n)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestRun runs the copy engine's loop with a copy interval of a minute:
// it copies a leader's fills at once when woken, by Wake or, on
// PostgreSQL, by a notification on connect.FillsChannel, and returns when
// its context ends. It has the engine's other test that takes time too,
// testLeaseRenewal.
func TestRun(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		mustAsset(t, db, "ACME", fillPrice)
		autoSync := copytrading.FollowInput{AutoSync: true}

		t.Run("returns at once without an OrderPlacer", func(t *testing.T) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				copytrading.New(db, copytrading.Config{}).Run(ctx)
			}()
			select {
			case <-done:
			case <-time.After(runWait):
				t.Fatal("Run without an OrderPlacer did not return")
			}
		})

		t.Run("woken", func(t *testing.T) {
			p := &placer{}
			s := copytrading.New(db, copytrading.Config{Orders: p, CopyInterval: runInterval})
			f := mustFixture(t, db, s, "200000", "40000", autoSync)
			r := startRun(s, p)
			defer r.cancel()
			for seq := int64(1); seq <= 2; seq++ {
				fill := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: seq, Side: "buy", Qty: "40", At: time.Now().UTC().Add(time.Second)})
				woken := time.Now()
				s.Wake()
				r.mustCopy(t, f.follow.ID, fill, woken)
			}
			r.stop(t)
		})

		t.Run("woken by notifications", func(t *testing.T) {
			if db.Dialect().Name() != dialect.PG {
				t.Skip("notifications are PostgreSQL's")
			}
			p := &placer{}
			s := copytrading.New(db, copytrading.Config{Orders: p, CopyInterval: runInterval})
			f := mustFixture(t, db, s, "200000", "40000", autoSync)
			before := listeners(t, db)
			r := startRun(s, p)
			defer r.cancel()
			testkit.Eventually(t, runWait, func() bool { return listeners(t, db) > before }, "Run to listen")
			// Run wakes itself once when it starts listening: three
			// copies need at least two notifications.
			for seq := int64(1); seq <= 3; seq++ {
				fill := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: seq, Side: "buy", Qty: "40", At: time.Now().UTC().Add(time.Second)})
				notified := time.Now()
				if _, err := db.ExecContext(ctx, "SELECT pg_notify(?, ?)", connect.FillsChannel, f.leader.portfolio.String()); err != nil {
					t.Fatal(err)
				}
				r.mustCopy(t, f.follow.ID, fill, notified)
			}
			r.stop(t)
			// 10 % of 40,000 for 40 of 200,000.
			if got := fmt.Sprint(p.placed()); got != "[buy 0.8 ACME buy 0.8 ACME buy 0.8 ACME]" {
				t.Errorf("copies %s", got)
			}
		})

		t.Run("lease renewal", func(t *testing.T) { testLeaseRenewal(t, db) })
	})
}

// TestRunStopsListening stops Run on PostgreSQL: once Run has returned,
// its listener is gone too, with its connection.
func TestRunStopsListening(t *testing.T) {
	t.Parallel()
	db := dbtest.Postgres(t)
	p := &placer{}
	s := copytrading.New(db, copytrading.Config{Orders: p, CopyInterval: runInterval})
	before := listeners(t, db)
	r := startRun(s, p)
	defer r.cancel()
	testkit.Eventually(t, runWait, func() bool { return listeners(t, db) > before }, "Run to listen")
	r.stop(t)
	testkit.Eventually(t, runWait, func() bool { return listeners(t, db) == before }, "Run's listener to go")
}
