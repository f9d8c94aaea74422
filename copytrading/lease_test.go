package copytrading_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// mustLease returns the lease of the follow's claim on the fill, nil when
// it has none.
func mustLease(tb testing.TB, db bun.IDB, follow uuid.UUID, fill string) *time.Time {
	tb.Helper()
	var e copyEventRow
	if err := db.NewSelect().Model(&e).Where("follow_id = ? AND fill_id = ?", follow, fill).Scan(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return e.LeaseUntil
}

// testCopyLease checks the claims that make each (fill, follow) taken up
// once however many instances copy: a claim another instance holds, one
// whose instance stopped, one without a lease, and a copy recorded but
// not yet counted in the watermark (testLeaseRenewal, run with TestRun,
// checks the renewal of a claim). The leader's equity is 200,000, the follower's 40,000 with
// 25 % allocated, and ACME trades at 50.
func testCopyLease(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	mustAsset(t, db, "ACME", fillPrice)
	autoSync := copytrading.FollowInput{AutoSync: true, Controls: copytrading.ControlsPatch{AllocationPct: pct("25")}}

	t.Run("a live claim holds its follow; a lapsed one is taken over once", func(t *testing.T) {
		p := &placer{}
		services := []*copytrading.Service{copytrading.New(db, copytrading.Config{Orders: p}), copytrading.New(db, copytrading.Config{Orders: p})}
		f := mustFixture(t, db, services[0], "200000", "40000", autoSync)
		at := time.Now().UTC().Add(time.Second)
		f1 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: at})
		f2 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 2, Side: "buy", Qty: "20", After: "60", At: at.Add(time.Second)})
		// An instance claimed f1, then stopped: its lease runs a minute.
		now := time.Now().UTC()
		until := now.Add(time.Minute)
		e := copyEventRow{FollowID: f.follow.ID, FillID: f1, Status: "claimed", CreatedAt: now, UpdatedAt: now, LeaseUntil: &until}
		if _, err := db.NewInsert().Model(&e).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := copyAll(ctx, services[0]); err != nil {
			t.Fatal(err)
		}
		// Neither f1 nor f2 after it is taken up.
		if got := p.placed(); len(got) != 0 {
			t.Errorf("copies under a live claim: %v, want none", got)
		}
		if diff := cmp.Diff([]event{{FillID: f1, Status: "claimed"}}, mustEvents(t, db, f.follow.ID)); diff != "" {
			t.Errorf("events under a live claim mismatch (-want +got):\n%s", diff)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 0 {
			t.Errorf("copied_seq under a live claim = %d, want 0", got)
		}

		// The lease lapses; both instances take the copies up at once.
		if _, err := db.NewUpdate().Model((*copyEventRow)(nil)).Set("lease_until = ?", now.Add(-time.Second)).
			Where("follow_id = ? AND fill_id = ?", f.follow.ID, f1).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, s := range services {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := copyAll(ctx, s); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		// Each once, f1's with the client order id the stopped
		// instance would have used.
		var got []string
		for _, o := range p.orders {
			got = append(got, o.ClientOrderID)
		}
		id1, id2 := copytrading.CopyOrderID(f.follow.ID, f1), copytrading.CopyOrderID(f.follow.ID, f2)
		if diff := cmp.Diff([]string{id1, id2}, got); diff != "" {
			t.Errorf("client order ids mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"buy 2 ACME", "buy 1 ACME"}, p.placed()); diff != "" {
			t.Errorf("copies mismatch (-want +got):\n%s", diff)
		}
		o1, o2 := orderIDOf(id1), orderIDOf(id2)
		wantEvents := []event{{FillID: f1, Status: "placed", OrderID: &o1}, {FillID: f2, Status: "placed", OrderID: &o2}}
		if diff := cmp.Diff(wantEvents, mustEvents(t, db, f.follow.ID)); diff != "" {
			t.Errorf("events mismatch (-want +got):\n%s", diff)
		}
		if got := mustLease(t, db, f.follow.ID, f1); got != nil {
			t.Errorf("a placed copy keeps the lease %v", got)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 2 {
			t.Errorf("copied_seq = %d, want 2", got)
		}
	})

	t.Run("a claim without a lease is taken over", func(t *testing.T) {
		p := &placer{}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		f := mustFixture(t, db, s, "200000", "40000", autoSync)
		f1 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: time.Now().UTC().Add(time.Second)})
		now := time.Now().UTC()
		e := copyEventRow{FollowID: f.follow.ID, FillID: f1, Status: "claimed", CreatedAt: now, UpdatedAt: now}
		if _, err := db.NewInsert().Model(&e).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"buy 2 ACME"}, p.placed()); diff != "" {
			t.Errorf("copies mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("a recorded copy only moves the watermark", func(t *testing.T) {
		p := &placer{}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		f := mustFixture(t, db, s, "200000", "40000", autoSync)
		f1 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: time.Now().UTC().Add(time.Second)})
		// An instance placed the copy and stopped before it moved
		// the watermark.
		now := time.Now().UTC()
		e := copyEventRow{FollowID: f.follow.ID, FillID: f1, Status: "placed", CreatedAt: now, UpdatedAt: now}
		if _, err := db.NewInsert().Model(&e).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		if got := p.placed(); len(got) != 0 {
			t.Errorf("copies %v, want none", got)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 1 {
			t.Errorf("copied_seq = %d, want 1", got)
		}
	})

}

// testLeaseRenewal has the broker take longer than a renewal period to
// place a copy: the claim's lease is renewed meanwhile. It sleeps for
// the period, about 1.7 s.
func testLeaseRenewal(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	mustAsset(t, db, "ACME", fillPrice)
	var f fixture
	var fill string
	var before, during *time.Time
	p := &placer{PlaceOrderFn: func(ctx context.Context, userID uuid.UUID, in connect.OrderInput) (connect.Placement, error) {
		before = mustLease(t, db, f.follow.ID, fill)
		time.Sleep(copytrading.LeaseFor/3 + 300*time.Millisecond) // not a wait: a broker slower than a renewal period
		during = mustLease(t, db, f.follow.ID, fill)
		return connect.Placement{Order: connect.Order{ID: orderIDOf(in.ClientOrderID), UserID: userID, Status: brokers.Pending}}, nil
	}}
	s := copytrading.New(db, copytrading.Config{Orders: p})
	f = mustFixture(t, db, s, "200000", "40000", copytrading.FollowInput{AutoSync: true})
	fill = mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: time.Now().UTC().Add(time.Second)})
	start := time.Now()
	if _, err := copyAll(ctx, s); err != nil {
		t.Fatal(err)
	}
	switch {
	case before == nil || during == nil:
		t.Fatalf("the claim had no lease while its copy was placed: %v, then %v", before, during)
	case !during.After(*before):
		t.Errorf("the lease was not renewed while the copy was placed: %v, then %v", *before, *during)
	case during.Before(start.Add(copytrading.LeaseFor/3 + copytrading.LeaseFor - time.Millisecond)):
		// Renewed a renewal period after the claim at the earliest,
		// for a lease from then.
		t.Errorf("the renewed lease ends at %v, before a renewal period and a lease from the start (%v)", *during, start)
	}
	if got := mustLease(t, db, f.follow.ID, fill); got != nil {
		t.Errorf("the placed copy keeps the lease %v", got)
	}
}

// TestCopyPassesOverBusyFollows has a follow held by another instance
// with more of the leader's fills to take up than a pass reads: a pass
// still copies the fills of the leader's other follows.
func TestCopyPassesOverBusyFollows(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		mustAsset(t, db, "ACME", fillPrice)
		p := &placer{}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		autoSync := copytrading.FollowInput{AutoSync: true}
		held := mustFixture(t, db, s, "200000", "40000", autoSync)
		// Another follower of the same leader; whichever way the two
		// follows sort, a pass reads each one's next fill.
		user, _, _ := mustAccount(t, db, "other-"+uuid.NewString()[:8]+"@example.com", "40000")
		other, err := s.Follow(ctx, user, copytrading.FollowInput{LeaderProfileID: held.profile})
		if err != nil {
			t.Fatal(err)
		}
		on := true
		if _, err := s.UpdateFollow(ctx, other.UserID, other.ID, copytrading.FollowPatch{AutoSync: &on}); err != nil {
			t.Fatal(err)
		}
		// 250 fills, of which the other follow took up all but the last.
		const fills = 250
		at := time.Now().UTC().Add(time.Second)
		rows := make([]connect.Fill, fills)
		for i := range rows {
			rows[i] = connect.Fill{PortfolioID: held.leader.portfolio, BrokerID: fmt.Sprintf("f%d", i+1), Symbol: "ACME", Side: "buy",
				Quantity: decimal.New(40, 0), Price: decimal.RequireFromString(fillPrice), FilledAt: at, Seq: int64(i + 1)}
		}
		if _, err := db.NewInsert().Model(&rows).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Table("follows").Set("copied_seq = ?", fills-1).Where("id = ?", other.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// Another instance holds the held follow's first fill.
		now := time.Now().UTC()
		until := now.Add(time.Minute)
		e := copyEventRow{FollowID: held.follow.ID, FillID: "f1", Status: "claimed", CreatedAt: now, UpdatedAt: now, LeaseUntil: &until}
		if _, err := db.NewInsert().Model(&e).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range p.orders {
			got = append(got, o.ClientOrderID)
		}
		if diff := cmp.Diff([]string{copytrading.CopyOrderID(other.ID, fmt.Sprintf("f%d", fills))}, got); diff != "" {
			t.Errorf("copies mismatch (-want +got):\n%s", diff)
		}
	})
}
