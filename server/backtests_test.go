package server_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/backtest/backtestdb"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/jsonnum"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
	"github.com/tradekit/tradekit/server"
)

// TestBacktests runs backtests through the API on both databases: the
// result is the library's on the same stored bars, it is kept under the
// strategy hash, a strategy published with that hash shows its figures,
// and bad definitions are 400s naming the parameter.
func TestBacktests(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		// From 2025: 22 months of the demo set, enough for trades of SMA
		// 10/30 crossovers and for the index's members over time (16),
		// in a third fewer rows than from 2024 (a load costs seconds under
		// the race detector).
		set, err := demo.Generate(demo.Config{Start: calendar.NewDate(2025, 1, 2)})
		if err != nil {
			t.Fatal(err)
		}
		if err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
			return demo.Load(ctx, st, set)
		}); err != nil {
			t.Fatal(err)
		}
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key, other := mustKey(t, db, "quant@example.com", "pro"), mustKey(t, db, "other@example.com", "pro")

		def := []string{"entry", "crossover(sma(close, 10), sma(close, 30))", "exit", "crossunder(sma(close,10), sma(close,30))",
			"maxPositions", "2", "commissionBps", "5", "slippageBps", "5", "stopLossPct", "8"}
		r := send(t, h, "POST", "/api/v1/backtests?"+query(append(def, "symbols", "QNTC,nwsc", "from", "2025-03-03")...), key)
		if r.status != 200 {
			t.Fatalf("run: %d %s", r.status, r.raw)
		}
		got := r.object(t)
		stats := got["stats"].(map[string]any)
		hash := got["strategyHash"].(string)
		if got["calendar"] != "NASDAQ" || len(got["symbols"].([]any)) != 2 || got["index"] != nil ||
			int(stats["trades"].(float64)) != len(got["trades"].([]any)) || stats["start"] != "2025-03-03" {
			t.Errorf("result: calendar %v, symbols %v, index %v, %v trades listed %d, start %v", got["calendar"], got["symbols"],
				got["index"], stats["trades"], len(got["trades"].([]any)), stats["start"])
		}

		// The same run through the library gives the same figures.
		s, err := backtest.Strategy{Entry: "crossover(sma(close,10),sma(close,30))", Exit: "crossunder(sma(close, 10), sma(close, 30))",
			MaxPositions: 2, CommissionBps: 5, SlippageBps: 5, StopLossPct: 8}.Compile()
		if err != nil {
			t.Fatal(err)
		}
		l, err := backtestdb.Load(ctx, marketdata.NewStore(db), backtestdb.Universe{Symbols: []string{"QNTC", "NWSC"}}, backtestdb.LoadConfig{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := backtest.Run(ctx, s, l.Assets, backtest.Config{Days: l.Days, From: calendar.NewDate(2025, 3, 3)})
		if err != nil {
			t.Fatal(err)
		}
		if s.Hash() != hash || stats["totalReturn"] != written(res.Stats.TotalReturn) || stats["sharpeRatio"] != written(res.Stats.Sharpe) ||
			len(got["equity"].([]any)) != len(res.Equity) || res.Stats.Trades == 0 {
			t.Errorf("the API's result differs from the library's: hash %s / %s, total return %v / %v, Sharpe %v / %v, %d trades",
				hash, s.Hash(), stats["totalReturn"], res.Stats.TotalReturn, stats["sharpeRatio"], res.Stats.Sharpe, res.Stats.Trades)
		}

		// Kept under the hash, for its owner only.
		if again := send(t, h, "GET", "/api/v1/backtests/"+hash, key); again.status != 200 || again.raw != r.raw {
			t.Errorf("the stored result: %d, the same document %t", again.status, again.raw == r.raw)
		}
		if r := send(t, h, "GET", "/api/v1/backtests/"+hash, other); r.status != 404 {
			t.Errorf("another user's result: %d, want 404", r.status)
		}

		// A published strategy shows its author's result, rounded to 8
		// places as a leader's figures are.
		send(t, h, "POST", "/api/v1/copy-trading/strategies?"+query("strategyHash", hash, "name", "SMA 10/30"), key)
		send(t, h, "POST", "/api/v1/copy-trading/strategies?"+query("strategyHash", hash, "name", "Borrowed"), other)
		round8 := func(f float64) float64 { return decimal.NewFromFloat(f).Round(8).InexactFloat64() }
		for _, st := range send(t, h, "GET", "/api/v1/copy-trading/strategies", key).list(t) {
			switch st["name"] {
			case "SMA 10/30":
				if st["totalReturn"] != round8(res.Stats.TotalReturn) || st["sharpeRatio"] != round8(res.Stats.Sharpe) {
					t.Errorf("published strategy: totalReturn %v, sharpeRatio %v; want %v, %v rounded", st["totalReturn"], st["sharpeRatio"],
						res.Stats.TotalReturn, res.Stats.Sharpe)
				}
			case "Borrowed":
				if st["totalReturn"] != nil || st["sharpeRatio"] != nil {
					t.Errorf("a strategy whose author ran no backtest shows %v, %v", st["totalReturn"], st["sharpeRatio"])
				}
			}
		}

		// An index trades its members over time.
		r = send(t, h, "POST", "/api/v1/backtests?"+query(append(def, "index", "TKXUS15")...), key)
		if r.status != 200 || r.object(t)["index"] != "TKXUS15" || len(r.object(t)["symbols"].([]any)) < 15 {
			t.Errorf("index run: %d %.300s", r.status, r.raw)
		}

		many := strings.Repeat("QNTC,", 100) + "QNTC"
		for _, c := range []struct {
			kv    []string
			field string
		}{
			{[]string{"exit", "0", "symbols", "QNTC"}, "entry"},
			{[]string{"entry", "sma(close)", "exit", "0", "symbols", "QNTC"}, "entry"},
			{[]string{"entry", "1", "exit", "0", "symbols", "NOPE"}, "symbols"},
			{[]string{"entry", "1", "exit", "0", "symbols", many}, "symbols"},
			{[]string{"entry", "1", "exit", "0"}, "symbols"},
			{[]string{"entry", "1", "exit", "0", "symbols", "QNTC", "index", "TKXUS15"}, "index"},
			{[]string{"entry", "1", "exit", "0", "index", "NOPE"}, "index"},
			{[]string{"entry", "1", "exit", "0", "symbols", "QNTC", "maxPositions", "0"}, "maxPositions"},
			{[]string{"entry", "1", "exit", "0", "symbols", "QNTC", "slippageBps", "lots"}, "slippageBps"},
			{[]string{"entry", "1", "exit", "0", "symbols", "QNTC", "cash", "0"}, "cash"},
		} {
			r := send(t, h, "POST", "/api/v1/backtests?"+query(c.kv...), key)
			fields, _ := r.body["error"].(map[string]any)["details"].(map[string]any)["fields"].([]any)
			if r.status != 400 || len(fields) != 1 || fields[0] != c.field {
				t.Errorf("%v: %d %s, want 400 naming %s", c.kv, r.status, r.raw, c.field)
			}
		}
	})
}

// TestBacktestBounds checks the plan's bounds on backtests through the
// API, on both databases: a rerun replaces the owner's result; a free
// account keeps 10 strategies, shared by its members, and a new one
// past them is a 403 naming the limit while a rerun is not; DELETE frees
// one, for its owner only; and a run while the account's one slot is
// taken on another instance is a 429 with Retry-After.
func TestBacktestBounds(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		set, err := demo.Generate(demo.Config{Start: calendar.NewDate(2026, 6, 1)})
		if err != nil {
			t.Fatal(err)
		}
		if err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
			return demo.Load(ctx, st, set)
		}); err != nil {
			t.Fatal(err)
		}
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		bst := billing.NewStore(db)
		free, err := bst.Plan(ctx, "free")
		if err != nil {
			t.Fatal(err)
		}
		owner := billing.User{Email: "owner@example.com", Name: "Owner", PlanID: free.ID, IsAdmin: true}
		member := billing.User{Email: "member@example.com", Name: "Member", PlanID: free.ID}
		if err := bst.CreateUser(ctx, &owner, time.Now()); err != nil {
			t.Fatal(err)
		}
		member.AccountID = owner.AccountID
		if err := bst.CreateUser(ctx, &member, time.Now()); err != nil {
			t.Fatal(err)
		}
		mustUserKey := func(u billing.User) string {
			t.Helper()
			_, key, err := bst.CreateKey(ctx, u.ID, "test", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			return key
		}
		key, memberKey, other := mustUserKey(owner), mustUserKey(member), mustKey(t, db, "other@example.com", "free")
		run := func(key string, i int) response {
			t.Helper()
			return send(t, h, "POST", "/api/v1/backtests?"+query("entry", fmt.Sprintf("close > %d", i), "exit", "close < 0", "symbols", "QNTC"), key)
		}
		rows := func() int {
			t.Helper()
			n, err := db.NewSelect().Table("backtests").Where("user_id = ?", owner.ID).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}

		// A rerun replaces the result.
		first, again := run(key, 0), run(key, 0)
		hash, _ := again.object(t)["strategyHash"].(string)
		if first.status != 200 || again.status != 200 || again.object(t)["id"] == first.object(t)["id"] || rows() != 1 {
			t.Fatalf("a run and its rerun: %d, %d, ids %v and %v, %d rows; want 200s, two ids, 1 row", first.status, again.status,
				first.object(t)["id"], again.object(t)["id"], rows())
		}
		if r := send(t, h, "GET", "/api/v1/backtests/"+hash, key); r.status != 200 || r.raw != again.raw {
			t.Errorf("GET after a rerun: %d, the rerun's document %t", r.status, r.raw == again.raw)
		}

		// The plan's 10 strategies, then 403; a rerun is still allowed.
		for i := 1; i < 10; i++ {
			if r := run(key, i); r.status != 200 {
				t.Fatalf("strategy %d: %d %s", i, r.status, r.raw)
			}
		}
		for name, k := range map[string]string{"the owner": key, "a member": memberKey} {
			r := run(k, 10)
			details, _ := r.body["error"].(map[string]any)["details"].(map[string]any)
			if r.status != 403 || r.errorCode() != "FORBIDDEN" || details["limit"] != "backtests" || details["max"] != 10.0 {
				t.Errorf("%s's 11th strategy of the account: %d %s, want 403 FORBIDDEN with details.limit backtests", name, r.status, r.raw)
			}
		}
		if r := run(key, 3); r.status != 200 || rows() != 10 {
			t.Errorf("a rerun at the limit: %d, %d rows; want 200, 10 rows", r.status, rows())
		}
		if r := run(other, 10); r.status != 200 {
			t.Errorf("another account's run: %d %s", r.status, r.raw)
		}

		// DELETE: the owner's only.
		for _, c := range []struct {
			name, hash, key string
			want            int
		}{
			{"another user's", hash, other, 404},
			{"a member's of the owner's", hash, memberKey, 404},
			{"unknown", strings.Repeat("0", 64), key, 404},
			{"the owner's", hash, key, 200},
			{"deleted already", hash, key, 404},
		} {
			r := send(t, h, "DELETE", "/api/v1/backtests/"+c.hash, c.key)
			if r.status != c.want || (c.want == 200 && (r.object(t)["status"] != "deleted" || r.object(t)["strategyHash"] != hash)) {
				t.Errorf("DELETE %s: %d %s, want %d", c.name, r.status, r.raw, c.want)
			}
		}
		if r := send(t, h, "GET", "/api/v1/backtests/"+hash, key); r.status != 404 {
			t.Errorf("GET after DELETE: %d, want 404", r.status)
		}
		if r := run(memberKey, 10); r.status != 200 {
			t.Errorf("a member's new strategy after a DELETE freed one: %d %s", r.status, r.raw)
		}

		// The account's one slot, taken by a run on another instance (a
		// lease it renews), refuses a run on this one, the member's too.
		lease := map[string]any{"id": uuid.New(), "account_id": owner.AccountID, "user_id": owner.ID,
			"expires_at": time.Now().UTC().Add(time.Hour)}
		if _, err := db.NewInsert().Model(&lease).TableExpr("backtest_runs").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]struct {
			key string
			i   int
		}{"the owner": {key, 3}, "a member": {memberKey, 10}} { // reruns: no 403
			r := run(c.key, c.i)
			details, _ := r.body["error"].(map[string]any)["details"].(map[string]any)
			if r.status != 429 || r.errorCode() != "RATE_LIMITED" || r.header.Get("Retry-After") != "5" || details["limit"] != "backtestRuns" {
				t.Errorf("%s's run while the account's slot is taken: %d %q %s, want 429 RATE_LIMITED with Retry-After 5", name, r.status,
					r.header.Get("Retry-After"), r.raw)
			}
		}
		if r := run(other, 10); r.status != 200 {
			t.Errorf("another account's run while this one's slot is taken: %d %s", r.status, r.raw)
		}
	})
}

// written returns x as the API writes it, read back: at most 15
// significant digits.
func written(x float64) float64 {
	v, _ := strconv.ParseFloat(string(jsonnum.AppendFloat(nil, x)), 64)
	return v
}
