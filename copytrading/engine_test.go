package copytrading_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// placer is the fake OrderPlacer: PlaceOrderFn answers each call; nil
// accepts every order as pending, with the id orderIDOf its client order
// id, without storing it. It records the orders it is asked to place, so
// that the engine's choices can be read back; the database is real.
type placer struct {
	PlaceOrderFn func(ctx context.Context, userID uuid.UUID, in connect.OrderInput) (connect.Placement, error)

	mu     sync.Mutex
	orders []connect.OrderInput
}

var _ copytrading.OrderPlacer = (*placer)(nil)

func (p *placer) PlaceOrder(ctx context.Context, userID uuid.UUID, in connect.OrderInput) (connect.Placement, error) {
	p.mu.Lock()
	p.orders = append(p.orders, in)
	p.mu.Unlock()
	if p.PlaceOrderFn != nil {
		return p.PlaceOrderFn(ctx, userID, in)
	}
	return connect.Placement{Order: connect.Order{ID: orderIDOf(in.ClientOrderID), UserID: userID, Status: brokers.Pending}}, nil
}

// placed returns the orders asked for so far, as "buy 2 ACME" (the
// tests trade ACME; another asset shows as its id).
func (p *placer) placed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []string{}
	for _, o := range p.orders {
		symbol := o.AssetID.String()
		if o.AssetID == marketdata.AssetID("ACME") {
			symbol = "ACME"
		}
		out = append(out, fmt.Sprintf("%s %s %s", o.Order.Side, o.Order.Quantity, symbol))
	}
	return out
}

// mustAccount stores a user with an active connection and a portfolio of
// the given equity, and returns the user, connection and portfolio ids.
func mustAccount(tb testing.TB, db bun.IDB, email string, equity string) (user, conn, portfolio uuid.UUID) {
	tb.Helper()
	ctx := context.Background()
	st := billing.NewStore(db)
	plan, err := st.Plan(ctx, "pro")
	if err != nil {
		tb.Fatal(err)
	}
	u := billing.User{Email: email, Name: email, PlanID: plan.ID}
	if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
		tb.Fatal(err)
	}
	now := time.Now().UTC()
	c := connect.Connection{ID: uuid.New(), UserID: u.ID, Provider: "paper", Status: connect.Active, RedirectURL: "https://x.example/", CreatedAt: now, UpdatedAt: now}
	p := connect.Portfolio{ID: uuid.New(), UserID: u.ID, ConnectionID: c.ID, Currency: "USD", Cash: decimal.RequireFromString(equity),
		Equity: decimal.RequireFromString(equity), UpdatedAt: now}
	for _, m := range []any{&c, &p} {
		if _, err := db.NewInsert().Model(m).Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	return u.ID, c.ID, p.ID
}

// TestCopyCatchesUp stores five leader fills while no engine runs, as a
// server that was down would find them, then runs Copy on two services at
// once: every fill is copied once, in fill order, sized as documented.
func TestCopyCatchesUp(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		md := marketdata.NewStore(db)
		a := marketdata.Asset{Symbol: "ACME", Name: "Acme", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
		if err := md.SaveAsset(ctx, &a); err != nil {
			t.Fatal(err)
		}
		c := decimal.New(50, 0)
		if err := md.SavePrices(ctx, []marketdata.Price{{AssetID: a.ID, Date: calendar.DateOf(time.Now().UTC()), Open: c, High: c, Low: c, Close: c, Volume: 1}}); err != nil {
			t.Fatal(err)
		}
		leader, _, leaderPF := mustAccount(t, db, "leader@example.com", "200000")
		follower, _, _ := mustAccount(t, db, "follower@example.com", "40000")
		rec := &placer{}
		one := copytrading.New(db, copytrading.Config{Orders: rec})
		two := copytrading.New(db, copytrading.Config{Orders: rec})
		p, err := one.Publish(ctx, leader, copytrading.PublishInput{PortfolioID: leaderPF, DisplayName: "Leader", Slug: "leader"})
		if err != nil {
			t.Fatal(err)
		}
		alloc := decimal.New(25, 0)
		if _, err := one.Follow(ctx, follower, copytrading.FollowInput{LeaderProfileID: p.ID, AutoSync: true,
			Controls: copytrading.ControlsPatch{AllocationPct: &alloc}}); err != nil {
			t.Fatal(err)
		}
		// The leader buys 40, 20 and 20 ACME at 50 (1 %, 0.5 % and 0.5 %
		// of its equity), sells half its 80, then sells the rest. The
		// follower's allocation is 10,000.
		base := time.Now().UTC().Add(time.Second).Truncate(time.Millisecond)
		for i, f := range []struct {
			side string
			qty  int64
		}{{"buy", 40}, {"buy", 20}, {"buy", 20}, {"sell", 40}, {"sell", 40}} {
			q := decimal.NewFromInt(f.qty)
			fill := connect.Fill{PortfolioID: leaderPF, BrokerID: fmt.Sprintf("f%d", i), Symbol: "ACME", Side: f.side,
				Quantity: q, Price: c, FilledAt: base.Add(time.Duration(i) * time.Second), Seq: int64(i + 1)}
			if _, err := db.NewInsert().Model(&fill).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for _, s := range []*copytrading.Service{one, two} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := copyAll(ctx, s); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if n, err := one.Copy(ctx); err != nil || n != 0 {
			t.Errorf("a third pass took up %d (%v)", n, err)
		}
		// All five fills came after the follow began. The follower holds
		// nothing (the recorder fills nothing), so the sells find nothing
		// to sell and are skipped.
		// 40 × 50 / 200,000 × 10,000 / 50 = 2; then 1 and 1.
		if got := rec.placed(); fmt.Sprint(got) != "[buy 2 ACME buy 1 ACME buy 1 ACME]" {
			t.Errorf("copies: %v", got)
		}
		var events []struct {
			FillID string `bun:"fill_id"`
			Status string `bun:"status"`
		}
		if err := db.NewSelect().Table("copy_events").Column("fill_id", "status").Order("fill_id").Scan(ctx, &events); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(events) != "[{f0 placed} {f1 placed} {f2 placed} {f3 skipped} {f4 skipped}]" {
			t.Errorf("events: %v", events)
		}
	})
}

// copyAll runs s.Copy until a pass takes nothing up, as Run does, and
// returns how many pairs the passes took up.
func copyAll(ctx context.Context, s *copytrading.Service) (int, error) {
	total := 0
	for {
		n, err := s.Copy(ctx)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}
