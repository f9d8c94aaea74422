package feed_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/marketdata/feed/feedtest"
)

// TestSchedulerBackfillTwoInstances: two instances start at once on a
// database whose bars stop five sessions ago; exactly one backfills the
// five days, in one recorded run, and neither asks for them twice.
func TestSchedulerBackfillTwoInstances(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		m := feedtest.NewMarket(50, novFrom, novTo)
		srv := feedtest.NewMassive(t, m)
		first := &feed.Runner{DB: db, Provider: mustMassive(t, srv, nil), Instance: "import"}
		if _, err := first.Run(ctx, novFrom, calendar.NewDate(2026, 11, 20)); err != nil {
			t.Fatal(err)
		}
		nyc, _ := time.LoadLocation("America/New_York")
		now := time.Date(2026, 11, 30, 19, 0, 0, 0, nyc) // after the 18:00 run of Monday the 30th
		before := len(srv.Requests("/v2/aggs/"))
		var wg sync.WaitGroup
		held := make([]bool, 2)
		errs := make([]error, 2)
		for i, name := range []string{"a", "b"} {
			s := &feed.Scheduler{Runner: &feed.Runner{DB: db, Provider: mustMassive(t, srv, nil), Instance: name},
				At: 18 * time.Hour, Backfill: 30}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, held[i], errs[i] = s.RunOnce(ctx, now)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		// The gap: 23, 24, 25, 27 and 30 November (26th: Thanksgiving).
		if got := srv.Requests("/v2/aggs/")[before:]; len(got) != 5 {
			t.Errorf("%d grouped-daily requests, want the 5 days once: %v", len(got), got)
		}
		runs, err := feed.NewStore(db).Runs(ctx, "massive", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 || runs[0].Days != 5 || runs[0].Outcome != feed.OutcomeOK || (runs[0].Instance != "a" && runs[0].Instance != "b") {
			t.Errorf("runs = %+v, want the import's and one backfill of 5 days by a or b", runs)
		}
		if !held[0] && !held[1] {
			t.Error("neither instance held the lease")
		}
	})
}

func TestSchedulerNextAndRange(t *testing.T) {
	nyc, _ := time.LoadLocation("America/New_York")
	db := dbtest.SQLite(t)
	s := &feed.Scheduler{Runner: &feed.Runner{DB: db, Provider: mustMassive(t, feedtest.NewMassive(t, feedtest.NewMarket(1, novFrom, novFrom)), nil),
		Instance: "x"}, At: 18 * time.Hour, Backfill: 30}
	for _, tt := range []struct {
		now, want time.Time
	}{
		{time.Date(2026, 11, 25, 17, 0, 0, 0, nyc), time.Date(2026, 11, 25, 18, 0, 0, 0, nyc)},
		{time.Date(2026, 11, 25, 18, 0, 0, 0, nyc), time.Date(2026, 11, 27, 18, 0, 0, 0, nyc)}, // Thanksgiving skipped
		{time.Date(2026, 11, 27, 19, 0, 0, 0, nyc), time.Date(2026, 11, 30, 18, 0, 0, 0, nyc)}, // the weekend skipped
	} {
		got, err := s.Next(tt.now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("Next(%s) = %s, %v; want %s", tt.now, got, err, tt.want)
		}
	}
	// An empty database: the range goes back Backfill days.
	from, to, ok, err := s.Range(context.Background(), time.Date(2026, 11, 29, 12, 0, 0, 0, nyc))
	if err != nil || !ok || from != calendar.NewDate(2026, 10, 30) || to != calendar.NewDate(2026, 11, 27) {
		t.Errorf("Range = %s, %s, %v, %v; want 2026-10-30 to 2026-11-27", from, to, ok, err)
	}
}
