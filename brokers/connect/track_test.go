package connect

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestCheckAfter(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		age, want time.Duration
	}{
		{0, minCheck},
		{time.Second, minCheck},
		{1600 * time.Millisecond, minCheck},
		{8 * time.Second, time.Second},
		{2 * time.Minute, 15 * time.Second},
		{4 * time.Minute, maxCheck},
		{24 * time.Hour, maxCheck},
	} {
		t.Run(tt.age.String(), func(t *testing.T) {
			if got := checkAfter(tt.age); got != tt.want {
				t.Errorf("checkAfter(%v) = %v, want %v", tt.age, got, tt.want)
			}
		})
	}
}

// failOn returns a Before or After hook failing the calls of method
// with err, the first n of them (all of them when n is negative).
func failOn(method string, n int, err error) func(string) error {
	var mu sync.Mutex
	return func(m string) error {
		mu.Lock()
		defer mu.Unlock()
		if m != method || n == 0 {
			return nil
		}
		n--
		return err
	}
}

var errDown = fmt.Errorf("fake: %w", tradekit.ErrUnavailable)

// rateLimited returns a broker's refusal over its rate limit that says to
// come back after wait.
func rateLimited(wait time.Duration) error { return limitedError{wait} }

// limitedError is a refusal over a rate limit, as brokers.RetryAfter
// reads it.
type limitedError struct{ wait time.Duration }

func (e limitedError) Error() string             { return "fake: 429 rate limit exceeded" }
func (e limitedError) Unwrap() error             { return tradekit.ErrUnavailable }
func (e limitedError) RetryAfter() time.Duration { return e.wait }

func TestTrackOrders(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()

		t.Run("ResendsAnUnacknowledgedOrder", func(t *testing.T) {
			f := newFixture(t, db)
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("PlaceOrder", 1, errDown) })
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			if p.Order.BrokerOrderID != nil {
				t.Fatal("acknowledged by a broker that could not be reached")
			}
			if n := mustTrack(t, f.env, f.s); n != 1 {
				t.Errorf("TrackOrders read %d orders, want 1", n)
			}
			o := f.mustOrder(t, p.Order.ID)
			if o.Status != brokers.Pending || brokerID(t, o) != "b-1" || o.BrokerStatus != "new" {
				t.Errorf("order after a resend: %s, broker %v %q", o.Status, o.BrokerOrderID, o.BrokerStatus)
			}
			if n := f.broker.count("PlaceOrder"); n != 2 || f.broker.requestCount() != 1 {
				t.Errorf("PlaceOrder called %d times, %d orders booked; want 2, 1", n, f.broker.requestCount())
			}
		})

		t.Run("FindsALostAnswer", func(t *testing.T) {
			f := newFixture(t, db)
			f.broker.set(func(b *fakeBroker) { b.After = failOn("PlaceOrder", 1, errDown) })
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			mustTrack(t, f.env, f.s)
			if o := f.mustOrder(t, p.Order.ID); brokerID(t, o) != "b-1" {
				t.Errorf("broker id %s, want b-1", *o.BrokerOrderID)
			}
			if n := f.broker.count("PlaceOrder"); n != 1 {
				t.Errorf("PlaceOrder called %d times, want once", n)
			}
		})

		t.Run("RejectsWhatNeverReachesTheBroker", func(t *testing.T) {
			f := newFixture(t, db)
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("PlaceOrder", -1, errDown) })
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			mustTrack(t, f.env, f.s) // 30 s on: sent again
			if o := f.mustOrder(t, p.Order.ID); o.Status != brokers.Pending {
				t.Fatalf("order 30 s on: %s, want pending", o.Status)
			}
			f.clock.Add(31 * time.Second)
			mustTrack(t, f.env, f.s) // 91 s on: past the minute
			o := f.mustOrder(t, p.Order.ID)
			if o.Status != brokers.Rejected || o.RejectRule != RuleBroker || o.RejectReason != "the broker could not be reached to place the order" || o.NextCheckAt != nil {
				t.Errorf("order past the deadline: %s %s %q, next check %v", o.Status, o.RejectRule, o.RejectReason, o.NextCheckAt)
			}
			if n := f.broker.count("PlaceOrder"); n != 2 {
				t.Errorf("PlaceOrder called %d times, want 2", n)
			}
		})

		t.Run("SkipsInactiveConnections", func(t *testing.T) {
			f := newFixture(t, db)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			// As a disconnect left it before disconnects settled their
			// orders (Disconnect leaves none pending now).
			if _, err := db.NewUpdate().Model((*Connection)(nil)).Set("status = ?", Disconnected).
				Where("id = ?", f.conn.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if n := mustTrack(t, f.env, f.s); n != 1 {
				t.Errorf("TrackOrders read %d orders, want 1", n)
			}
			o := f.mustOrder(t, p.Order.ID)
			// The order is 30 s old: next looked at in 30 s / 8.
			next := f.clock.Now().Add(30 * time.Second / 8)
			if o.Status != brokers.Pending || o.NextCheckAt == nil || !o.NextCheckAt.Equal(next) {
				t.Errorf("order: %s, next check %v; want pending, %v", o.Status, o.NextCheckAt, next)
			}
			if n := f.broker.count("Order"); n != 0 {
				t.Errorf("the broker of a disconnected connection was read %d times", n)
			}
		})

		t.Run("NotDueYet", func(t *testing.T) {
			f := newFixture(t, db)
			mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			if n, err := f.s.TrackOrders(ctx); err != nil || n != 0 {
				t.Errorf("TrackOrders = %d, %v; want 0 orders", n, err)
			}
		})

		t.Run("RecordsTheBrokersEnd", func(t *testing.T) {
			f := newFixture(t, db)
			pf := f.mustLedger(t, f.s, f.conn)
			expired := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "90"))
			refused := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "91"))
			partial := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			f.broker.finish(brokerID(t, expired.Order), brokers.Cancelled, "expired")
			f.broker.finish(brokerID(t, refused.Order), brokers.Rejected, "rejected")
			f.broker.fill(brokerID(t, partial.Order), dec("4"), dec("100"), dec("0"))
			f.broker.finish(brokerID(t, partial.Order), brokers.Cancelled, "canceled")
			if n := mustTrack(t, f.env, f.s); n != 3 {
				t.Errorf("TrackOrders read %d orders, want 3", n)
			}
			type row struct {
				Status             brokers.OrderStatus
				Rule, Reason, Word string
				Filled             string
				Cancelled          bool
			}
			get := func(p Placement) row {
				o := f.mustOrder(t, p.Order.ID)
				if o.NextCheckAt != nil {
					t.Errorf("final order %s has a next check", o.ID)
				}
				return row{o.Status, o.RejectRule, o.RejectReason, o.BrokerStatus, decimalString(o.FilledQuantity), o.CancelledAt != nil}
			}
			got := []row{get(expired), get(refused), get(partial)}
			want := []row{
				{brokers.Cancelled, "", "", "expired", "<nil>", true},
				{brokers.Rejected, RuleBroker, "the broker rejected the order after accepting it (rejected)", "rejected", "<nil>", false},
				{brokers.Cancelled, "", "", "canceled", "4", true},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("orders (-want +got):\n%s", diff)
			}
			// The cancelled order's fill is the ledger's, and a fill.
			wantLedger := ledgerState{Cash: "99600", Equity: "100000", Version: 1, FillSeq: 1, Positions: []positionState{{"ACME", "4", "100", ""}}}
			if diff := cmp.Diff(wantLedger, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]fillState{{1, brokerID(t, partial.Order), "buy", "4", "100", "4"}}, f.fillsOf(t, pf.ID)); diff != "" {
				t.Errorf("fills (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]uuid.UUID{pf.ID}, f.onFills()); diff != "" {
				t.Errorf("OnFill calls (-want +got):\n%s", diff)
			}
		})

		t.Run("BrokerErrorKeepsItPending", func(t *testing.T) {
			f := newFixture(t, db)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("Orders", -1, errDown) })
			if n := mustTrack(t, f.env, f.s); n != 1 {
				t.Errorf("TrackOrders read %d orders, want 1", n)
			}
			if o := f.mustOrder(t, p.Order.ID); o.Status != brokers.Pending || !o.NextCheckAt.After(f.clock.Now()) {
				t.Errorf("order: %s, next check %v", o.Status, o.NextCheckAt)
			}
		})

		t.Run("WaitsOutTheBrokersRateLimit", func(t *testing.T) {
			f := newFixture(t, db)
			// A placement refused over the limit: checked again when the
			// broker said to come back, not a second later.
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("PlaceOrder", 1, rateLimited(20*time.Second)) })
			refused := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "100"))
			if o := f.mustOrder(t, refused.Order.ID); o.Status != brokers.Pending || !o.NextCheckAt.Equal(f.clock.Now().Add(20*time.Second)) {
				t.Errorf("order refused over the rate limit: %s, next check %v; want pending, in 20 s", o.Status, o.NextCheckAt)
			}
			placed := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "100"))
			// A list refused over the limit: both orders wait 15 s.
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("Orders", -1, rateLimited(15*time.Second)) })
			f.clock.Add(20 * time.Second)
			if _, err := f.s.TrackOrders(ctx); err != nil {
				t.Fatal(err)
			}
			until := f.clock.Now().Add(15 * time.Second)
			for _, p := range []Placement{refused, placed} {
				if o := f.mustOrder(t, p.Order.ID); !o.NextCheckAt.Equal(until) {
					t.Errorf("order %s after a list refused over the rate limit: next check %v, want %v", o.ID, o.NextCheckAt, until)
				}
			}
			for range 2 {
				f.clock.Add(5 * time.Second)
				if n, err := f.s.TrackOrders(ctx); err != nil || n != 0 {
					t.Errorf("TrackOrders before the broker's limit resets = %d, %v; want 0 orders", n, err)
				}
			}
			if n := f.broker.count("Orders"); n != 1 {
				t.Errorf("the broker's list was asked %d times, want once", n)
			}
			// Once it resets, the tracker sends the order it refused.
			f.broker.set(func(b *fakeBroker) { b.Before = nil })
			f.clock.Add(5 * time.Second)
			if n, err := f.s.TrackOrders(ctx); err != nil || n != 2 {
				t.Errorf("TrackOrders once the limit reset = %d, %v; want 2 orders", n, err)
			}
			if o := f.mustOrder(t, refused.Order.ID); o.BrokerOrderID == nil {
				t.Error("the order refused over the rate limit was not sent again once it reset")
			}
		})

		t.Run("EachOrderReadOnce", func(t *testing.T) {
			f := newFixture(t, db)
			two := f.service(t)
			const n = 6
			for range n {
				mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "100"))
			}
			f.clock.Add(time.Minute)
			var wg sync.WaitGroup
			read := make([]int, 2)
			for i, s := range []*Service{f.s, two} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k, err := s.TrackOrders(ctx)
					if err != nil {
						t.Error(err)
					}
					read[i] = k
				}()
			}
			wg.Wait()
			// Each service lists the connection's orders at most once.
			if read[0]+read[1] != n || f.broker.count("Order") != 0 || f.broker.count("Orders") > 2 {
				t.Errorf("the services read %v orders, the broker's orders %d times and its list %d times; want %d in all, 0, at most 2",
					read, f.broker.count("Order"), f.broker.count("Orders"), n)
			}
		})
	})
}

func TestCancelOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()

		t.Run("ReleasesTheReservation", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustGuardrails(t, f.user, brokers.Guardrails{MaxDailyTrades: 10, MaxPositionSizePct: dec("20"), AllowedAssetTypes: brokers.AssetTypes()})
			first := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "150", "100"))
			if p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "150", "100")); p.Order.RejectRule != brokers.RuleMaxPositionSizePct {
				t.Fatalf("a second 15%% buy beside the first: %s %s", p.Order.Status, p.Order.RejectRule)
			}
			f.clock.Add(time.Second)
			o, err := f.s.CancelOrder(ctx, f.user, first.Order.ID)
			if err != nil {
				t.Fatal(err)
			}
			at := f.clock.Now()
			if o.Status != brokers.Cancelled || o.CancelledAt == nil || !o.CancelledAt.Equal(at) || o.NextCheckAt != nil || o.BrokerStatus != "canceled" {
				t.Errorf("cancelled order: %s at %v, next check %v, broker %q", o.Status, o.CancelledAt, o.NextCheckAt, o.BrokerStatus)
			}
			if diff := cmp.Diff(o, f.mustOrder(t, o.ID)); diff != "" {
				t.Errorf("stored order differs from the returned one (-returned +stored):\n%s", diff)
			}
			if st := f.broker.state(brokerID(t, o)); st.Status != brokers.Cancelled {
				t.Errorf("at the broker: %s", st.Status)
			}
			if p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "150", "100")); p.Order.Status != brokers.Pending {
				t.Errorf("a 15%% buy after the cancellation: %s %s", p.Order.Status, p.Order.RejectRule)
			}
			// Only a pending order can be cancelled.
			if _, err := f.s.CancelOrder(ctx, f.user, first.Order.ID); !errors.Is(err, tradekit.ErrConflict) {
				t.Errorf("cancelling it again = %v, want ErrConflict", err)
			}
		})

		t.Run("AcceptedToCancel", func(t *testing.T) {
			f := newFixture(t, db)
			f.broker.set(func(b *fakeBroker) { b.asyncStop = true })
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			o, err := f.s.CancelOrder(ctx, f.user, p.Order.ID)
			if err != nil || o.Status != brokers.Cancelled || o.BrokerStatus != "pending_cancel" {
				t.Errorf("CancelOrder = %s %q, %v; want cancelled, pending_cancel", o.Status, o.BrokerStatus, err)
			}
		})

		t.Run("NeverPlaced", func(t *testing.T) {
			f := newFixture(t, db)
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("PlaceOrder", -1, errDown) })
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			o, err := f.s.CancelOrder(ctx, f.user, p.Order.ID)
			if err != nil || o.Status != brokers.Cancelled || o.BrokerStatus != "never placed" {
				t.Errorf("CancelOrder = %s %q, %v; want cancelled, never placed", o.Status, o.BrokerStatus, err)
			}
			if n := f.broker.count("CancelOrder"); n != 0 {
				t.Errorf("the broker was asked to cancel %d times", n)
			}
		})

		t.Run("LostAnswer", func(t *testing.T) {
			f := newFixture(t, db)
			f.broker.set(func(b *fakeBroker) { b.After = failOn("PlaceOrder", 1, errDown) })
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			o, err := f.s.CancelOrder(ctx, f.user, p.Order.ID)
			if err != nil || o.Status != brokers.Cancelled {
				t.Fatalf("CancelOrder = %s, %v", o.Status, err)
			}
			if st := f.broker.state("b-1"); st.Status != brokers.Cancelled {
				t.Errorf("at the broker: %s, want cancelled", st.Status)
			}
		})

		t.Run("FilledFirst", func(t *testing.T) {
			f := newFixture(t, db)
			pf := f.mustLedger(t, f.s, f.conn)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			f.broker.fill(brokerID(t, p.Order), dec("10"), dec("99"), dec("0"))
			if _, err := f.s.CancelOrder(ctx, f.user, p.Order.ID); !errors.Is(err, tradekit.ErrConflict) {
				t.Errorf("CancelOrder of an order filled at the broker = %v, want ErrConflict", err)
			}
			if o := f.mustOrder(t, p.Order.ID); o.Status != brokers.Filled {
				t.Errorf("order: %s, want filled", o.Status)
			}
			want := ledgerState{Cash: "99010", Equity: "100000", Version: 1, FillSeq: 1, Positions: []positionState{{"ACME", "10", "99", ""}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]uuid.UUID{pf.ID}, f.onFills()); diff != "" {
				t.Errorf("OnFill calls (-want +got):\n%s", diff)
			}
		})

		t.Run("Refused", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustGuardrails(t, f.user, brokers.Guardrails{AllowedAssetTypes: []string{"etf"}})
			rejected := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "100"))
			f.mustGuardrails(t, f.user, loose())
			down := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "100"))
			other := f.mustUser(t)
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("CancelOrder", 1, errDown) })
			for _, tt := range []struct {
				name    string
				user    uuid.UUID
				id      uuid.UUID
				before  func()
				wantErr error
			}{
				{"Rejected", f.user, rejected.Order.ID, nil, tradekit.ErrConflict},
				{"AnotherUsers", other, down.Order.ID, nil, tradekit.ErrNotFound},
				{"Unknown", f.user, uuid.New(), nil, tradekit.ErrNotFound},
				{"BrokerDown", f.user, down.Order.ID, nil, tradekit.ErrUnavailable},
				{"Disconnected", f.user, down.Order.ID, func() {
					// As disconnects left orders before they settled them.
					if _, err := db.NewUpdate().Model((*Connection)(nil)).Set("status = ?", Disconnected).
						Where("id = ?", f.conn.ID).Exec(ctx); err != nil {
						t.Fatal(err)
					}
				}, tradekit.ErrConflict},
			} {
				t.Run(tt.name, func(t *testing.T) {
					if tt.before != nil {
						tt.before()
					}
					if _, err := f.s.CancelOrder(ctx, tt.user, tt.id); !errors.Is(err, tt.wantErr) {
						t.Errorf("CancelOrder = %v, want %v", err, tt.wantErr)
					}
				})
			}
			if o := f.mustOrder(t, down.Order.ID); o.Status != brokers.Pending {
				t.Errorf("the order no cancellation reached: %s, want pending", o.Status)
			}
		})

		t.Run("ConcurrentChange", func(t *testing.T) {
			// Recording a cancellation of an order that another instance
			// recorded meanwhile: cancelled already is the answer, filled
			// is a conflict.
			f := newFixture(t, db)
			a := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "100"))
			b := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "100"))
			if _, err := f.s.CancelOrder(ctx, f.user, a.Order.ID); err != nil {
				t.Fatal(err)
			}
			got, err := f.s.cancelled(ctx, a.Order, brokers.OrderState{BrokerStatus: "canceled"})
			if err != nil || got.Status != brokers.Cancelled || got.ID != a.Order.ID {
				t.Errorf("cancelled(a cancelled order) = %s, %v; want it cancelled", got.Status, err)
			}
			f.broker.fill(brokerID(t, b.Order), one, dec("100"), dec("0"))
			mustTrack(t, f.env, f.s)
			if _, err := f.s.cancelled(ctx, b.Order, brokers.OrderState{BrokerStatus: "canceled"}); !errors.Is(err, tradekit.ErrConflict) {
				t.Errorf("cancelled(a filled order) = %v, want ErrConflict", err)
			}
		})

		t.Run("AfterUntrackedPartialFill", func(t *testing.T) { testCancelAfterUntrackedPartialFill(t, db) })
	})
}

// testCancelAfterUntrackedPartialFill cancels an order the broker filled
// in part since the tracker last read it. The broker's answer to the
// cancellation holds the fill: the ledger must hold it too (as the
// tracker records a cancelled order's fill), or the exposure the order
// bought is in neither the reservations nor the positions until the next
// sync.
func testCancelAfterUntrackedPartialFill(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	f := newFixture(t, db)
	f.mustLedger(t, f.s, f.conn)
	p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
	f.broker.fill(brokerID(t, p.Order), dec("4"), dec("100"), dec("0"))
	o, err := f.s.CancelOrder(ctx, f.user, p.Order.ID)
	if err != nil || o.Status != brokers.Cancelled {
		t.Fatalf("CancelOrder = %s, %v", o.Status, err)
	}
	if stored := f.mustOrder(t, p.Order.ID); stored.FilledQuantity == nil || !stored.FilledQuantity.Equal(dec("4")) {
		t.Errorf("the cancelled order's filled quantity: %s, want 4", decimalString(stored.FilledQuantity))
	}
	want := []positionState{{"ACME", "4", "100", ""}}
	if got := f.ledgerOf(t, f.conn.ID); !cmp.Equal(want, got.Positions) || got.Cash != "99600" {
		t.Errorf("ledger: cash %s, positions %+v; want 99600, %+v", got.Cash, got.Positions, want)
	}
}

// TestTrackOrdersOneListPerConnection checks that the order tracker's
// cost at the broker does not grow with the pending orders: with 60
// resting orders of one connection, each round that reads any of them
// makes one list call and nothing else, over five minutes of rounds
// every 200 ms as the orders age. (It made one GET per order before.)
func TestTrackOrdersOneListPerConnection(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db)
		const n = 60
		f.mustGuardrails(t, f.user, brokers.Guardrails{MaxDailyTrades: 1000, MaxPositionSizePct: dec("100"), MaxPortfolioRiskPct: dec("100"),
			AllowedAssetTypes: brokers.AssetTypes()})
		for range n {
			mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "1"))
		}
		if c, err := db.NewSelect().Table("broker_orders").Where("status = ?", brokers.Pending).Count(context.Background()); err != nil || c != n {
			t.Fatalf("%d orders pending, %v; want %d", c, err, n)
		}
		calls := func() int {
			return f.broker.count("Order") + f.broker.count("Orders") + f.broker.count("OrderByClientID")
		}
		read, rounds, listed := 0, 0, 0
		for range 5 * 60 * 5 {
			f.clock.Add(minCheck)
			before := calls()
			k, err := f.s.TrackOrders(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := calls() - before
			if k > 0 && got != 1 || k == 0 && got != 0 {
				t.Fatalf("round %d read %d orders with %d broker calls; want one call when it reads any", rounds, k, got)
			}
			read, rounds, listed = read+k, rounds+1, listed+got
		}
		// Every order is read at least every maxCheck: the reads are
		// shared, so far fewer lists than rounds.
		if read < n*5*60/int(maxCheck/time.Second) || listed > rounds/10 {
			t.Errorf("%d rounds read %d orders with %d lists; want at least %d orders, at most %d lists",
				rounds, read, listed, n*5*60/int(maxCheck/time.Second), rounds/10)
		}
		t.Logf("%d rounds read %d orders with %d list calls", rounds, read, listed)
	})
}
