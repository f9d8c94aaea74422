package copytrading_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestDemoLeaders loads the demo leaders over 18 months of demo prices:
// each is published, with a year of daily equity and its trades, marked
// SYNTHETIC; its trades are a paper-broker account's orders, so that its
// profile and transactions are verified; loading again changes nothing;
// and the figures are the same on both databases (the simulation is
// deterministic).
func TestDemoLeaders(t *testing.T) {
	t.Parallel()
	set, err := demo.Generate(demo.Config{Start: calendar.NewDate(2025, 5, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var returns [][]float64
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if err := demo.Load(ctx, marketdata.NewStore(db), set); err != nil {
			t.Fatal(err)
		}
		st := billing.NewStore(db)
		plan, err := st.Plan(ctx, "free")
		if err != nil {
			t.Fatal(err)
		}
		users := make([]uuid.UUID, len(copytrading.DemoLeaders))
		for i, l := range copytrading.DemoLeaders {
			u := billing.User{Email: l.Slug + "@demo.tradekit.example", Name: l.DisplayName, PlanID: plan.ID}
			if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
				t.Fatal(err)
			}
			users[i] = u.ID
		}
		at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		for range 2 {
			if err := copytrading.LoadDemoLeaders(ctx, db, users, at); err != nil {
				t.Fatal(err)
			}
		}
		s := copytrading.New(db, copytrading.Config{})
		list, total, err := s.Leaders(ctx, copytrading.LeaderFilter{Page: 1, Limit: 20})
		if err != nil || total != 3 || len(list) != 3 {
			t.Fatalf("%d leaders (%v)", total, err)
		}
		var rs []float64
		for _, l := range list {
			d, err := s.LeaderBySlug(ctx, l.Slug)
			if err != nil {
				t.Fatal(err)
			}
			tx, err := s.Transactions(ctx, l.Slug)
			if err != nil {
				t.Fatal(err)
			}
			if !l.Verified || l.Provider != "paper" || len(tx) == 0 || len(d.Monthly) < 12 || d.MaxDrawdown == nil || *d.MaxDrawdown >= 0 ||
				l.SharpeRatio == nil || !strings.HasPrefix(l.Bio, "SYNTHETIC") {
				t.Errorf("%s: verified %v (%s), %d trades, %d months, drawdown %v, Sharpe %v, bio %q", l.Slug, l.Verified, l.Provider, len(tx),
					len(d.Monthly), d.MaxDrawdown, l.SharpeRatio, l.Bio)
			}
			checkPaperAccount(t, db, l, tx)
			rs = append(rs, l.TotalReturn)
		}
		n, err := db.NewSelect().Table("portfolio_equity").Count(ctx)
		if err != nil || n < 3*250 {
			t.Errorf("%d equity points (%v)", n, err)
		}
		if n, err := db.NewSelect().Table("paper_accounts").Count(ctx); err != nil || n != 3 {
			t.Errorf("%d paper accounts after loading twice (%v), want 3", n, err)
		}
		checkDemoStrategies(t, db, s)
		// A database an older version seeded has the leaders but not
		// their strategies: loading again adds them.
		for _, table := range []string{"published_strategies", "backtests"} {
			if _, err := db.NewDelete().Table(table).Where("1 = 1").Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := copytrading.LoadDemoLeaders(ctx, db, users, at); err != nil {
			t.Fatal(err)
		}
		checkDemoStrategies(t, db, s)
		returns = append(returns, rs)
	})
	if len(returns) == 2 && (returns[0][0] != returns[1][0] || returns[0][1] != returns[1][1] || returns[0][2] != returns[1][2]) {
		t.Errorf("the figures differ between the databases: %v", returns)
	}
}

// checkPaperAccount checks that the leader's transactions, all verified,
// are the orders of the paper account its connection names, one for
// one, and that the account's cash is the portfolio's.
func checkPaperAccount(t *testing.T, db *bun.DB, l copytrading.Leader, tx []copytrading.Transaction) {
	t.Helper()
	ctx := context.Background()
	var conn connect.Connection
	err := db.NewSelect().Model(&conn).Where("id = (SELECT connection_id FROM portfolios WHERE id = ?)", l.PortfolioID).Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var orders []struct {
		ID        string          `bun:"id"`
		Side      string          `bun:"side"`
		Symbol    string          `bun:"symbol"`
		FilledQty decimal.Decimal `bun:"filled_qty"`
		Status    string          `bun:"status"`
	}
	if err := db.NewRaw("SELECT id, side, symbol, filled_qty, status FROM paper_orders WHERE account_id = ?", conn.AccountID).Scan(ctx, &orders); err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for _, o := range orders {
		byID[o.ID] = fmt.Sprintf("%s %s %s %s", o.Status, o.Side, o.FilledQty, o.Symbol)
	}
	if len(orders) != len(tx) {
		t.Errorf("%s: %d paper orders for %d transactions", l.Slug, len(orders), len(tx))
	}
	for _, x := range tx {
		if want := fmt.Sprintf("filled %s %s %s", x.Side, x.Quantity, x.Symbol); byID[x.ID] != want || !x.Verified {
			t.Errorf("%s: transaction %s (%s, verified %v) is the paper order %q", l.Slug, x.ID, want, x.Verified, byID[x.ID])
			break
		}
	}
	var cash decimal.Decimal
	if err := db.NewRaw("SELECT cash FROM paper_accounts WHERE id = ?", conn.AccountID).Scan(ctx, &cash); err != nil {
		t.Fatal(err)
	}
	pf, err := connect.NewStore(db).PortfolioByID(ctx, l.PortfolioID)
	if err != nil {
		t.Fatal(err)
	}
	if !cash.Equal(pf.Cash) || conn.Provider != "paper" || conn.Status != connect.Disconnected || conn.AccountName == "" {
		t.Errorf("%s: the paper account's cash %s, the portfolio's %s; connection %s %s %q", l.Slug, cash, pf.Cash, conn.Provider,
			conn.Status, conn.AccountName)
	}
}

// checkDemoStrategies checks that each demo leader publishes its
// strategy once, with its slug as the author and the figures of its
// backtest, stored as its own under the strategy's hash.
func checkDemoStrategies(t *testing.T, db *bun.DB, s *copytrading.Service) {
	t.Helper()
	ctx := context.Background()
	list, err := s.Strategies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]copytrading.StrategyView{}
	for _, v := range list {
		byName[v.Name] = v
	}
	if len(list) != len(copytrading.DemoLeaders) {
		t.Errorf("%d strategies, want one per demo leader", len(list))
	}
	for _, l := range copytrading.DemoLeaders {
		v, ok := byName[l.StrategyName()]
		c, err := l.Strategy().Compile()
		if err != nil {
			t.Fatal(err)
		}
		if !ok || v.AuthorSlug == nil || *v.AuthorSlug != l.Slug || v.TotalReturn == nil || v.SharpeRatio == nil ||
			v.StrategyHash != c.Hash() || !strings.HasPrefix(v.Description, "SYNTHETIC") {
			t.Errorf("%s's strategy: %+v", l.Slug, v)
			continue
		}
		var doc struct {
			StrategyHash string `json:"strategyHash"`
			Stats        struct {
				TotalReturn float64 `json:"totalReturn"`
				Trades      int     `json:"trades"`
			} `json:"stats"`
		}
		var document string
		err = db.NewSelect().Table("backtests").Column("document").Where("user_id = ? AND strategy_hash = ?", v.UserID, v.StrategyHash).Scan(ctx, &document)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(document), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.StrategyHash != v.StrategyHash || doc.Stats.Trades == 0 || math.Abs(doc.Stats.TotalReturn-*v.TotalReturn) > 1e-8 {
			t.Errorf("%s's backtest: %+v; the list shows %v", l.Slug, doc, *v.TotalReturn)
		}
	}
}
