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
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

// mustSync starts a sync of the connection, waits for it and returns its
// log entry as stored.
func (f *fixture) mustSync(t *testing.T, c Connection) SyncLog {
	t.Helper()
	ctx := context.Background()
	log, err := f.s.StartSync(ctx, c.UserID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if log.Status != Syncing || log.ConnectionID != c.ID {
		t.Errorf("StartSync = %+v, want a running sync of %s", log, c.ID)
	}
	f.s.Wait()
	logs, err := NewStore(f.db).Logs(ctx, c.UserID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		if l.ID == log.ID {
			return l
		}
	}
	t.Fatalf("sync %s is not in the log", log.ID)
	return SyncLog{}
}

// mustConn reads the connection back.
func (f *fixture) mustConn(t *testing.T, c Connection) Connection {
	t.Helper()
	got, err := NewStore(f.db).Connection(context.Background(), c.UserID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestSync(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()

		t.Run("TakesTheAccount", func(t *testing.T) {
			f := newFixture(t, db)
			t1, t2 := start.Add(-5*time.Hour), start.Add(-2*time.Hour)
			day := func(n int) time.Time { return start.Truncate(24*time.Hour).AddDate(0, 0, n) }
			f.broker.set(func(b *fakeBroker) {
				b.acct.Cash = dec("50000")
				b.positions["ACME"] = &brokers.Position{Symbol: "ACME", Quantity: dec("100"), AvgEntryPrice: dec("90")}
				b.positions["ZZZZ"] = &brokers.Position{Symbol: "ZZZZ", Quantity: dec("10"), AvgEntryPrice: dec("5")}
				b.marks["ZZZZ"] = dec("6")
				b.external = []brokers.Fill{
					{ID: "x-2", Symbol: "ACME", Side: brokers.Buy, Quantity: dec("40"), Price: dec("91"), Time: t2},
					{ID: "x-1", Symbol: "ACME", Side: brokers.Buy, Quantity: dec("60"), Price: dec("89.5"), Time: t1},
				}
				b.history = []brokers.EquityPoint{
					{Date: day(-2), Equity: dec("59000")},
					{Date: day(-1), Equity: dec("59500"), Flow: dec("-100")},
					{Date: day(0), Equity: dec("1"), Flow: dec("7")},
				}
			})
			f.clock.Add(time.Minute)
			log := f.mustSync(t, f.conn)
			if log.Status != Completed || log.PositionsSynced == nil || *log.PositionsSynced != 2 || log.CompletedAt == nil || log.Error != "" {
				t.Errorf("sync log: %+v", log)
			}
			c := f.mustConn(t, f.conn)
			now := start.Add(time.Minute)
			if c.SyncStatus != Completed || c.LastSyncAt == nil || !c.LastSyncAt.Equal(now) || c.LedgerDrift != "" ||
				c.ReconciledAt == nil || !c.ReconciledAt.Equal(now) || c.SyncID == nil || *c.SyncID != log.ID {
				t.Errorf("connection after the sync: status %s, last sync %v, drift %q, reconciled %v", c.SyncStatus, c.LastSyncAt, c.LedgerDrift, c.ReconciledAt)
			}
			pf := f.mustPortfolio(t, f.conn.ID)
			// 50,000 + 100 × 100 + 10 × 6
			if !pf.Cash.Equal(dec("50000")) || !pf.Equity.Equal(dec("60060")) || pf.Version != 0 || pf.FillSeq != 2 {
				t.Errorf("portfolio: cash %s, equity %s, version %d, fill seq %d", pf.Cash, pf.Equity, pf.Version, pf.FillSeq)
			}
			type pos struct {
				Symbol, Qty, Cost, Value string
				Asset                    *uuid.UUID
			}
			var got []pos
			for _, p := range pf.Positions {
				got = append(got, pos{p.Symbol, p.Quantity.String(), p.AverageCost.String(), decimalString(p.BrokerValue), p.AssetID})
			}
			want := []pos{{"ACME", "100", "90", "10000", &f.acme.ID}, {"ZZZZ", "10", "5", "60", nil}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("positions (-want +got):\n%s", diff)
			}
			wantFills := []fillState{{1, "x-1", "buy", "60", "89.5", ""}, {2, "x-2", "buy", "40", "91", ""}}
			if diff := cmp.Diff(wantFills, f.fillsOf(t, pf.ID)); diff != "" {
				t.Errorf("fills (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]uuid.UUID{pf.ID}, f.onFills()); diff != "" {
				t.Errorf("OnFill calls (-want +got):\n%s", diff)
			}
			history, err := NewStore(db).History(ctx, f.user, pf.ID)
			if err != nil {
				t.Fatal(err)
			}
			var points []string
			for _, h := range history {
				points = append(points, fmt.Sprintf("%s %s %s", calendar.Date(h.Date), h.Equity, h.Flow))
			}
			// Today's equity is the account's; its flow is the bar's.
			wantPoints := []string{"2026-02-28 59000 0", "2026-03-01 59500 -100", "2026-03-02 60060 7"}
			if diff := cmp.Diff(wantPoints, points); diff != "" {
				t.Errorf("history (-want +got):\n%s", diff)
			}
			// The first sync looks a year back for fills.
			if diff := cmp.Diff([]time.Time{now.AddDate(-1, 0, 0)}, f.broker.fillsAfter); diff != "" {
				t.Errorf("Fills(after) (-want +got):\n%s", diff)
			}

			// The broker moved without Tradekit: a deposit and a buy.
			f.broker.set(func(b *fakeBroker) {
				b.acct.Cash = dec("51000")
				b.positions["ACME"].Quantity = dec("120")
			})
			f.clock.Add(time.Minute)
			f.mustSync(t, f.conn)
			c = f.mustConn(t, f.conn)
			if want := "cash: ledger 50000, broker 51000; ACME: ledger 100, broker 120"; c.LedgerDrift != want {
				t.Errorf("drift %q, want %q", c.LedgerDrift, want)
			}
			if !c.ReconciledAt.Equal(start.Add(2 * time.Minute)) {
				t.Errorf("reconciled at %v", c.ReconciledAt)
			}
			if pf := f.mustPortfolio(t, f.conn.ID); pf.Version != 1 || pf.FillSeq != 2 || !pf.Cash.Equal(dec("51000")) {
				t.Errorf("portfolio after the second sync: version %d, fill seq %d, cash %s", pf.Version, pf.FillSeq, pf.Cash)
			}
			// Fills held already are not added again, and the next sync
			// looks a month behind the newest.
			if diff := cmp.Diff(wantFills, f.fillsOf(t, pf.ID)); diff != "" {
				t.Errorf("fills after the second sync (-want +got):\n%s", diff)
			}
			if got := f.broker.fillsAfter[1]; !got.Equal(t2.AddDate(0, -1, 0)) {
				t.Errorf("Fills(after %v), want a month before %v", got, t2)
			}
			f.mustSync(t, f.conn)
			if c := f.mustConn(t, f.conn); c.LedgerDrift != "" {
				t.Errorf("drift %q after a sync that found none", c.LedgerDrift)
			}
			if n := len(f.onFills()); n != 1 {
				t.Errorf("OnFill called %d times, want 1", n)
			}
		})

		t.Run("OpenOrdersShareFromTheBroker", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			id := brokerID(t, p.Order)
			f.broker.fill(id, dec("4"), dec("100"), dec("0.5"))
			f.mustSync(t, f.conn)
			o := f.mustOrder(t, p.Order.ID)
			if o.Status != brokers.Pending || !o.LedgerQty.Equal(dec("4")) || !o.LedgerCash.Equal(dec("-400.5")) {
				t.Errorf("order after the sync: %s, ledger %s / %s; want pending, 4 / -400.5", o.Status, o.LedgerQty, o.LedgerCash)
			}
			want := ledgerState{Cash: "99599.5", Equity: "99999.5", Version: 1, Positions: []positionState{{"ACME", "4", "100", ""}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger after the sync (-want +got):\n%s", diff)
			}
			// The tracker applies the rest only.
			f.broker.fill(id, dec("6"), dec("100"), dec("0.5"))
			mustTrack(t, f.env, f.s)
			want = ledgerState{Cash: "98999", Equity: "99999", Version: 2, FillSeq: 1, Positions: []positionState{{"ACME", "10", "100", ""}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger after the fill (-want +got):\n%s", diff)
			}
		})

		t.Run("FillDuringTheReadLeavesTheLedger", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			id := brokerID(t, p.Order)
			two := f.service(t)
			fired := false
			f.broker.set(func(b *fakeBroker) {
				b.Before = func(m string) error {
					if m != "Positions" || fired {
						return nil
					}
					fired = true
					// While the sync reads: the order fills and another
					// instance records it; and a deposit arrives.
					f.broker.fill(id, dec("10"), dec("100"), dec("0"))
					f.broker.set(func(b *fakeBroker) { b.acct.Cash = b.acct.Cash.Add(dec("500")) })
					o := p.Order
					now := f.clock.Now()
					if _, err := two.record(ctx, &o, f.broker.state(id), now, now); err != nil {
						t.Error(err)
					}
					return nil
				}
			})
			f.clock.Add(time.Minute)
			if log := f.mustSync(t, f.conn); log.Status != Completed {
				t.Fatalf("sync: %s %s", log.Status, log.Error)
			}
			// The ledger is the fill's, not the broker's read (99,500).
			want := ledgerState{Cash: "99000", Equity: "100000", Version: 1, FillSeq: 1, Positions: []positionState{{"ACME", "10", "100", ""}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
			if c := f.mustConn(t, f.conn); !c.ReconciledAt.Equal(start) {
				t.Errorf("reconciled at %v, want %v (the first sync's)", c.ReconciledAt, start)
			}
			pf := f.mustPortfolio(t, f.conn.ID)
			if diff := cmp.Diff([]fillState{{1, id, "buy", "10", "100", "10"}}, f.fillsOf(t, pf.ID)); diff != "" {
				t.Errorf("fills (-want +got):\n%s", diff)
			}
		})

		t.Run("KeepsStops", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			f.broker.set(func(b *fakeBroker) { b.autoFill = true })
			mustPlace(t, f.s, f.user, withStop(marketOrder(f.conn, f.acme, brokers.Buy, "10"), "90"))
			f.clock.Add(time.Second)
			mustPlace(t, f.s, f.user, withStop(marketOrder(f.conn, f.acme, brokers.Buy, "5"), "92"))
			// The ledger knows ACME by the stop of its latest buy; a sync
			// keeps it, and a new connection's first sync finds it in
			// the filled orders.
			f.clock.Add(time.Minute)
			f.mustSync(t, f.conn)
			if got := f.ledgerOf(t, f.conn.ID).Positions; len(got) != 1 || got[0].Stop != "92" {
				t.Errorf("positions after the sync: %+v, want ACME with stop 92", got)
			}
			pf := f.mustPortfolio(t, f.conn.ID)
			if _, err := db.NewDelete().Model((*Position)(nil)).Where("portfolio_id = ?", pf.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			f.mustSync(t, f.conn)
			if got := f.ledgerOf(t, f.conn.ID).Positions; len(got) != 1 || got[0].Stop != "92" {
				t.Errorf("positions after a sync without a ledger position: %+v, want ACME with stop 92", got)
			}
		})

		for _, tt := range []struct {
			name string
			err  error
			want string
		}{
			{"Unauthorized", fmt.Errorf("fake: %w", tradekit.ErrUnauthorized),
				"the broker no longer accepts this connection's authorization: disconnect and connect again"},
			{"Unavailable", fmt.Errorf("fake: %w", tradekit.ErrUnavailable), "the broker could not be reached or failed; the next sync will try again"},
			{"ForUsers", fmt.Errorf("fake: %w", tradekit.Errorf(tradekit.ErrConflict, "the account is closed")), "the account is closed"},
			{"Internal", errors.New("fake: boom"), "the sync failed on the server; the next sync will try again"},
		} {
			t.Run("Fails"+tt.name, func(t *testing.T) {
				f := newFixture(t, db)
				f.broker.set(func(b *fakeBroker) {
					b.Before = func(m string) error {
						if m == "History" {
							return tt.err
						}
						return nil
					}
				})
				log := f.mustSync(t, f.conn)
				if log.Status != Failed || log.Error != tt.want || log.PositionsSynced != nil || log.CompletedAt == nil {
					t.Errorf("sync log: %s %q, positions %v", log.Status, log.Error, log.PositionsSynced)
				}
				c := f.mustConn(t, f.conn)
				if c.SyncStatus != Failed || c.LastError != tt.want || c.LastSyncAt != nil {
					t.Errorf("connection: %s %q, last sync %v", c.SyncStatus, c.LastError, c.LastSyncAt)
				}
				if _, err := NewStore(db).PortfolioOf(ctx, f.conn.ID); !errors.Is(err, tradekit.ErrNotFound) {
					t.Errorf("a failed first sync wrote a portfolio: %v", err)
				}
			})
		}

		t.Run("OnlyActiveConnections", func(t *testing.T) {
			f := newFixture(t, db)
			other := f.mustUser(t)
			if _, err := f.s.StartSync(ctx, other, f.conn.ID); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("StartSync of another user's connection = %v, want ErrNotFound", err)
			}
			if _, err := f.s.Disconnect(ctx, f.user, f.conn.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.StartSync(ctx, f.user, f.conn.ID); !errors.Is(err, tradekit.ErrConflict) {
				t.Errorf("StartSync of a disconnected connection = %v, want ErrConflict", err)
			}
			if _, err := f.s.pull(ctx, uuid.New()); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("pull of an unknown connection = %v, want ErrNotFound", err)
			}
			// A connection that holds no tokens reaches no broker.
			if _, err := f.s.pull(ctx, f.conn.ID); !errors.Is(err, tradekit.ErrConflict) {
				t.Errorf("pull of a connection without tokens = %v, want ErrConflict", err)
			}
		})

		t.Run("OneSyncAtATime", func(t *testing.T) {
			f := newFixture(t, db)
			entered, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			f.broker.set(func(b *fakeBroker) {
				b.Before = func(m string) error {
					if m == "Account" {
						once.Do(func() {
							close(entered)
							<-release
						})
					}
					return nil
				}
			})
			first, err := f.s.StartSync(ctx, f.user, f.conn.ID)
			if err != nil {
				t.Fatal(err)
			}
			<-entered
			two := f.service(t)
			again, err := two.StartSync(ctx, f.user, f.conn.ID)
			if err != nil {
				t.Fatal(err)
			}
			if again.ID != first.ID || again.Status != Syncing {
				t.Errorf("StartSync during a sync = %s %s, want the running sync %s", again.ID, again.Status, first.ID)
			}
			close(release)
			f.s.Wait()
			logs, err := NewStore(db).Logs(ctx, f.user, f.conn.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(logs) != 1 || logs[0].Status != Completed {
				t.Errorf("logs: %+v, want one completed sync", logs)
			}
		})

		t.Run("SaveFills", func(t *testing.T) { testSaveFills(t, db) })
	})
}

func TestSameFills(t *testing.T) {
	t.Parallel()
	a, b := uuid.New(), uuid.New()
	st := func(qty string, status brokers.OrderStatus) brokers.OrderState {
		return brokers.OrderState{FilledQuantity: dec(qty), Status: status}
	}
	for _, tt := range []struct {
		name string
		x, y map[uuid.UUID]brokers.OrderState
		want bool
	}{
		{"BothEmpty", nil, map[uuid.UUID]brokers.OrderState{}, true},
		{"Same", map[uuid.UUID]brokers.OrderState{a: st("1", brokers.Pending)}, map[uuid.UUID]brokers.OrderState{a: st("1.0", brokers.Pending)}, true},
		{"MoreFilled", map[uuid.UUID]brokers.OrderState{a: st("1", brokers.Pending)}, map[uuid.UUID]brokers.OrderState{a: st("2", brokers.Pending)}, false},
		{"StatusMoved", map[uuid.UUID]brokers.OrderState{a: st("0", brokers.Pending)}, map[uuid.UUID]brokers.OrderState{a: st("0", brokers.Cancelled)}, false},
		{"OtherOrder", map[uuid.UUID]brokers.OrderState{a: st("1", brokers.Pending)}, map[uuid.UUID]brokers.OrderState{b: st("1", brokers.Pending)}, false},
		{"OneMore", map[uuid.UUID]brokers.OrderState{a: st("1", brokers.Pending)},
			map[uuid.UUID]brokers.OrderState{a: st("1", brokers.Pending), b: st("0", brokers.Pending)}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameFills(tt.x, tt.y); got != tt.want {
				t.Errorf("sameFills() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSnapshotOpenOrders reads an account whose open orders fill while
// it is read: the read is repeated until two agree, at most three times.
func TestSnapshotOpenOrders(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	boom := fmt.Errorf("fake: %w", tradekit.ErrUnavailable)
	for _, tt := range []struct {
		name           string
		filled         []string // what each read of the open orders finds filled
		failOpenAt     int      // the read of the open orders that fails, from 1; 0 for none
		failMethod     string   // the broker method that fails on its second call
		wantFilled     string
		wantConsistent bool
		wantReads      int
		wantErr        error
	}{
		{name: "Still", filled: []string{"0", "0"}, wantFilled: "0", wantConsistent: true, wantReads: 2},
		{name: "FilledOnce", filled: []string{"0", "5", "5"}, wantFilled: "5", wantConsistent: true, wantReads: 3},
		{name: "Busy", filled: []string{"0", "1", "2", "3"}, wantFilled: "3", wantConsistent: false, wantReads: 4},
		{name: "FirstReadFails", filled: []string{"0"}, failOpenAt: 1, wantErr: tradekit.ErrUnavailable},
		{name: "SecondReadFails", filled: []string{"0", "0"}, failOpenAt: 2, wantErr: tradekit.ErrUnavailable},
		{name: "AccountFailsAgain", filled: []string{"0"}, failMethod: "Account", wantErr: tradekit.ErrUnavailable},
		{name: "PositionsFail", filled: []string{"0"}, failMethod: "Positions", wantErr: tradekit.ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newFakeBroker(func() time.Time { return start })
			calls := map[string]int{}
			b.Before = func(m string) error {
				calls[m]++
				if m == tt.failMethod && (m == "Positions" || calls[m] == 2) {
					return boom
				}
				return nil
			}
			reads := 0
			open := func(context.Context) (map[uuid.UUID]brokers.OrderState, error) {
				reads++
				if reads == tt.failOpenAt {
					return nil, boom
				}
				return map[uuid.UUID]brokers.OrderState{id: {Status: brokers.Pending, FilledQuantity: dec(tt.filled[reads-1])}}, nil
			}
			_, _, states, consistent, err := snapshot(context.Background(), b, open)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("snapshot() error %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got := states[id].FilledQuantity; !got.Equal(dec(tt.wantFilled)) || consistent != tt.wantConsistent || reads != tt.wantReads {
				t.Errorf("snapshot() = filled %s, consistent %v after %d reads; want %s, %v after %d", got, consistent, reads,
					tt.wantFilled, tt.wantConsistent, tt.wantReads)
			}
		})
	}
}

func TestPublicSyncError(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"Deadline", fmt.Errorf("read: %w", context.DeadlineExceeded), "the broker could not be reached or failed; the next sync will try again"},
		{"ForUsers", tradekit.Errorf(tradekit.ErrUnavailable, "maintenance until 6 pm"), "maintenance until 6 pm"},
		{"Other", errors.New("x"), "the sync failed on the server; the next sync will try again"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := publicSyncError(tt.err); got != tt.want {
				t.Errorf("publicSyncError() = %q, want %q", got, tt.want)
			}
		})
	}
}

func testSaveFills(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	f := newFixture(t, db)
	pf := f.mustLedger(t, f.s, f.conn)
	at := func(h int) time.Time { return start.Add(time.Duration(h) * time.Hour) }
	fill := func(id string, h int) Fill {
		return Fill{BrokerID: id, Symbol: "ACME", Side: "buy", Quantity: dec("1"), Price: dec("100"), FilledAt: at(h)}
	}
	st := NewStore(db)
	if got, err := st.saveFills(ctx, &pf, nil); err != nil || got != uuid.Nil {
		t.Errorf("saveFills(none) = %v, %v", got, err)
	}
	if got, err := st.saveFills(ctx, &pf, []Fill{fill("a", 1)}); err != nil || got != pf.ID {
		t.Errorf("saveFills(a) = %v, %v; want %v", got, err, pf.ID)
	}
	// Fills held are skipped; the new ones are numbered in fill order.
	if got, err := st.saveFills(ctx, &pf, []Fill{fill("d", 4), fill("a", 1), fill("b", 2), fill("c", 3)}); err != nil || got != pf.ID {
		t.Errorf("saveFills(d, a, b, c) = %v, %v; want %v", got, err, pf.ID)
	}
	if got, err := st.saveFills(ctx, &pf, []Fill{fill("c", 3), fill("a", 1)}); err != nil || got != uuid.Nil {
		t.Errorf("saveFills of fills held = %v, %v; want none", got, err)
	}
	want := []fillState{{1, "a", "buy", "1", "100", ""}, {2, "b", "buy", "1", "100", ""}, {3, "c", "buy", "1", "100", ""},
		{4, "d", "buy", "1", "100", ""}}
	if diff := cmp.Diff(want, f.fillsOf(t, pf.ID)); diff != "" {
		t.Errorf("fills (-want +got):\n%s", diff)
	}
	if got := f.mustPortfolio(t, f.conn.ID); got.FillSeq != 4 {
		t.Errorf("fill seq %d, want 4", got.FillSeq)
	}
	last, err := st.lastFill(ctx, f.conn.ID)
	if err != nil || !last.Equal(at(4)) {
		t.Errorf("lastFill = %v, %v; want %v", last, err, at(4))
	}
}

// TestTick fails the syncs a stopped instance left running and starts
// those that are due.
func TestTick(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, func(c *Config) { c.SyncInterval = -1 })
		now := f.clock.Now()
		// orphan's sync began 3 minutes ago (the timeout is 2), young's 1.
		mark := func(c Connection, began time.Time) SyncLog {
			log := SyncLog{ID: uuid.New(), ConnectionID: c.ID, Status: Syncing, StartedAt: began}
			if _, err := db.NewInsert().Model(&log).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			c.SyncID, c.SyncStatus, c.SyncStartedAt = &log.ID, Syncing, &began
			if err := NewStore(db).updateConnection(ctx, &c, "sync_id", "sync_status", "sync_started_at"); err != nil {
				t.Fatal(err)
			}
			return log
		}
		orphan, young := f.conn, f.mustConnection(t, f.user)
		orphanLog, youngLog := mark(orphan, now.Add(-3*time.Minute)), mark(young, now.Add(-time.Minute))
		recent := f.mustConnection(t, f.user)
		recent.LastSyncAt = &now
		if err := NewStore(db).updateConnection(ctx, &recent, "last_sync_at"); err != nil {
			t.Fatal(err)
		}
		if err := f.s.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		status := func(c Connection, log SyncLog) string {
			t.Helper()
			var l SyncLog
			if err := db.NewSelect().Model(&l).Where("id = ?", log.ID).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return f.mustConn(t, c).SyncStatus + "/" + l.Status
		}
		if got := status(orphan, orphanLog); got != "failed/failed" {
			t.Errorf("orphaned sync: %s, want failed/failed", got)
		}
		if got := status(young, youngLog); got != "syncing/syncing" {
			t.Errorf("running sync: %s, want syncing/syncing", got)
		}
		if c := f.mustConn(t, orphan); c.LastError != "the sync was interrupted (the server running it stopped); the next sync will try again" {
			t.Errorf("orphan's last error %q", c.LastError)
		}
		if n := f.broker.count("Account"); n != 0 {
			t.Errorf("a tick without scheduled syncs read the broker %d times", n)
		}

		// With scheduled syncs, the orphan and the connection never synced
		// are due; the running sync and the recent one are not.
		sched := f.service(t, func(c *Config) { c.SyncInterval = 15 * time.Minute })
		if err := sched.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		sched.Wait()
		for _, tt := range []struct {
			name string
			c    Connection
			want int
		}{{"orphan", orphan, 2}, {"young", young, 1}, {"recent", recent, 0}} {
			logs, err := NewStore(db).Logs(ctx, f.user, tt.c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(logs) != tt.want {
				t.Errorf("%s: %d sync logs, want %d", tt.name, len(logs), tt.want)
			}
		}
		if c := f.mustConn(t, orphan); c.SyncStatus != Completed || c.LastError != "" {
			t.Errorf("orphan after its scheduled sync: %s %q", c.SyncStatus, c.LastError)
		}
		// Two minutes on, the young sync is orphaned in turn and taken over.
		f.clock.Add(2 * time.Minute)
		if err := sched.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		sched.Wait()
		if got := status(young, youngLog); got != "completed/failed" {
			t.Errorf("the young sync two minutes on: %s, want completed/failed", got)
		}
	})
}

// TestRun runs the background loops for a moment: a due connection is
// synced and a due order is read from its broker.
func TestRun(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db, func(c *Config) {
			c.SyncInterval, c.OrderInterval = 5*time.Millisecond, 5*time.Millisecond
		})
		p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
		f.broker.fill(brokerID(t, p.Order), dec("10"), dec("100"), decimal.Zero)
		f.clock.Add(time.Minute)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.s.Run(ctx)
		}()
		testkit.Eventually(t, 10*time.Second, func() error {
			c := f.mustConn(t, f.conn)
			o := f.mustOrder(t, p.Order.ID)
			if c.LastSyncAt == nil || !c.LastSyncAt.Equal(f.clock.Now()) || o.Status != brokers.Filled {
				return fmt.Errorf("last sync %v, order %s", c.LastSyncAt, o.Status)
			}
			return nil
		}, "a sync now and the order filled")
		cancel()
		<-done
		// Whichever of the sync and the tracker saw the fill first, the
		// ledger holds it once.
		got := f.ledgerOf(t, f.conn.ID)
		if diff := cmp.Diff([]positionState{{"ACME", "10", "100", ""}}, got.Positions); diff != "" || got.Cash != "99000" {
			t.Errorf("ledger after Run: cash %s, want 99000; positions (-want +got):\n%s", got.Cash, diff)
		}
	})
}
