package server_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
)

// mustPortfolio connects a paper account for the key's owner, syncs it
// and returns its portfolio id and the connection id.
func mustPortfolio(t testing.TB, ts tradingServer, key string) (portfolio, conn string) {
	t.Helper()
	conn = connectPaper(t, ts, key)
	ts.call(t, "POST", "/api/v1/brokers/connections/"+conn+"/sync", key).object(t)
	ts.Connections().Wait()
	for _, p := range ts.call(t, "GET", "/api/v1/portfolios", key).list(t) {
		if p["connectionId"] == conn {
			return p["id"].(string), conn
		}
	}
	t.Fatalf("no portfolio for connection %s", conn)
	return "", ""
}

// mustHistory replaces a portfolio's daily equity with the given days:
// "YYYY-MM-DD equity [flow]".
func mustHistory(t *testing.T, db bun.IDB, portfolio string, days ...string) {
	t.Helper()
	ctx := context.Background()
	id := uuid.MustParse(portfolio)
	if _, err := db.NewDelete().Model((*connect.EquityPoint)(nil)).Where("portfolio_id = ?", id).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range days {
		f := strings.Fields(s)
		d, err := calendar.ParseDate(f[0])
		if err != nil {
			t.Fatal(err)
		}
		p := connect.EquityPoint{PortfolioID: id, Date: marketdata.SQLDate(d), Equity: decimal.RequireFromString(f[1])}
		if len(f) == 3 {
			p.Flow = decimal.RequireFromString(f[2])
		}
		if _, err := db.NewInsert().Model(&p).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCopyTradingLeaders(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		ts := startOrders(t, db, nil)
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		carol := mustKey(t, db, "carol@example.com", "pro")
		alicePF, aliceConn := mustPortfolio(t, ts, alice)
		bobPF, _ := mustPortfolio(t, ts, bob)
		// Alice buys through the paper broker: a fill, and a holding.
		bought := ts.order(t, alice, "connectionId", aliceConn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "100").object(t)
		ts.waitOrder(t, alice, bought["id"].(string), "filled")
		testkit.Eventually(t, 10*time.Second, func() bool {
			return len(ts.call(t, "GET", "/api/v1/portfolios/"+alicePF, alice).object(t)["positions"].([]any)) > 0
		}, "the fill to reach alice's portfolio")
		ts.Connections().Wait()

		// Alice's history: +10 %, −10 % (in February), a deposit that is
		// no return, +10 % (in March).
		mustHistory(t, db, alicePF, "2026-01-30 100000", "2026-02-02 110000", "2026-02-27 99000",
			"2026-02-28 149000 50000", "2026-03-02 163900")
		mustHistory(t, db, bobPF, "2026-03-02 100000", "2026-03-03 100500", "2026-03-04 101000")

		publish := func(key string, kv ...string) response {
			return ts.call(t, "POST", "/api/v1/copy-trading/publish?"+query(kv...), key)
		}
		r := publish(alice, "portfolioId", alicePF, "displayName", "Alice Trades", "slug", "alice-t", "bio", "Momentum, daily bars.")
		p := r.object(t)
		if p["slug"] != "alice-t" || p["displayName"] != "Alice Trades" || p["portfolioId"] != alicePF || p["publishedAt"] == nil || p["id"] == nil {
			t.Fatalf("publish: %s", r.raw)
		}
		aliceProfile := p["id"].(string)
		// The checks of publishing.
		for _, c := range []struct {
			key    string
			kv     []string
			status int
			field  string
		}{
			{bob, []string{"portfolioId", bobPF, "displayName", "Bob", "slug", "Bob"}, 400, "slug"},
			{bob, []string{"portfolioId", bobPF, "displayName", "Bob", "slug", "bo"}, 400, "slug"},
			{bob, []string{"portfolioId", bobPF, "displayName", "Bob", "slug", strings.Repeat("b", 41)}, 400, "slug"},
			{bob, []string{"portfolioId", bobPF, "displayName", " ", "slug", "bob-b"}, 400, "displayName"},
			{bob, []string{"portfolioId", "x", "displayName", "Bob", "slug", "bob-b"}, 400, "portfolioId"},
			{bob, []string{"portfolioId", alicePF, "displayName", "Bob", "slug", "bob-b"}, 404, ""},
			{bob, []string{"portfolioId", bobPF, "displayName", "Bob", "slug", "alice-t"}, 409, ""},
			{alice, []string{"portfolioId", alicePF, "displayName", "Alice", "slug", "alice-2"}, 409, ""},
		} {
			r := publish(c.key, c.kv...)
			if c.status == 400 {
				wantInvalid(t, fmt.Sprint(c.kv), r, c.field)
			} else if r.status != c.status {
				t.Errorf("publish %v: %d %s, want %d", c.kv, r.status, r.raw, c.status)
			}
		}
		publish(bob, "portfolioId", bobPF, "displayName", "Bob", "slug", "bob-b").object(t)

		// The list: alice's time-weighted return ignores the deposit:
		// 1.1 × 0.9 × 1.0 × 1.1 − 1 = 0.089; bob's is 0.01, steadier.
		list := ts.call(t, "GET", "/api/v1/copy-trading/leaders", carol)
		items := list.list(t)
		if len(items) != 2 || items[0]["slug"] != "alice-t" || items[1]["slug"] != "bob-b" || items[0]["verified"] != true ||
			math.Abs(items[0]["totalReturn"].(float64)-0.089) > 1e-12 || math.Abs(items[1]["totalReturn"].(float64)-0.01) > 1e-12 {
			t.Errorf("leaders: %s", list.raw)
		}
		// The figures are rounded to 8 places: no float noise in the text.
		if !strings.Contains(list.raw, `"totalReturn":0.089,`) || !strings.Contains(list.raw, `"totalReturn":0.01,`) {
			t.Errorf("leaders' total returns are not rounded: %s", list.raw)
		}
		if m := list.body["meta"].(map[string]any); m["total"] != 2.0 || m["limit"] != 20.0 {
			t.Errorf("meta: %v", m)
		}
		for q, want := range map[string]string{
			"minReturn=0.05": "[alice-t]", "minReturn=0.1": "[]", "sortBy=followers&limit=1&page=2": "[bob-b]",
			"sortBy=sharpeRatio": "[bob-b alice-t]",
		} {
			var slugs []any
			for _, l := range ts.call(t, "GET", "/api/v1/copy-trading/leaders?"+q, carol).list(t) {
				slugs = append(slugs, l["slug"])
			}
			if fmt.Sprint(slugs) != want && !(want == "[]" && slugs == nil) {
				t.Errorf("?%s: %v, want %s", q, slugs, want)
			}
		}
		for _, c := range []struct{ query, field string }{
			{"sortBy=name", "sortBy"}, {"limit=101", "limit"}, {"page=0", "page"}, {"minReturn=x", "minReturn"}, {"minReturn=NaN", "minReturn"},
		} {
			wantInvalid(t, c.query, ts.call(t, "GET", "/api/v1/copy-trading/leaders?"+c.query, carol), c.field)
		}

		// The detail, with the holding bought through the paper broker.
		tx := ts.call(t, "GET", "/api/v1/copy-trading/leaders/alice-t/transactions", carol).list(t)
		if len(tx) != 1 || tx[0]["symbol"] != "WIDG" || tx[0]["side"] != "buy" || tx[0]["quantity"] != 100.0 || tx[0]["verified"] != true {
			t.Errorf("transactions: %v", tx)
		}
		d := ts.call(t, "GET", "/api/v1/copy-trading/leaders/alice-t", carol)
		detail := d.object(t)
		if math.Abs(detail["maxDrawdown"].(float64)+0.1) > 1e-12 || detail["verified"] != true || detail["followers"] != 0.0 {
			t.Errorf("detail: %s", d.raw)
		}
		months := fmt.Sprint(detail["monthlyReturns"])
		if !strings.Contains(months, "month:2026-02") || !strings.Contains(months, "month:2026-03") {
			t.Errorf("monthly returns: %s", months)
		}
		holdings := detail["topHoldings"].([]any)
		if len(holdings) != 1 || holdings[0].(map[string]any)["symbol"] != "WIDG" {
			t.Errorf("top holdings: %v", holdings)
		}
		for _, path := range []string{"/api/v1/copy-trading/leaders/nobody", "/api/v1/copy-trading/leaders/nobody/transactions"} {
			if r := ts.call(t, "GET", path, carol); r.status != http.StatusNotFound {
				t.Errorf("%s: %d", path, r.status)
			}
		}

		// Follows.
		follow := func(key string, kv ...string) response {
			return ts.call(t, "POST", "/api/v1/copy-trading/follow?"+query(kv...), key)
		}
		r = follow(carol, "leaderProfileId", aliceProfile)
		f := r.object(t)
		if f["leaderProfileId"] != aliceProfile || f["autoSync"] != false || f["notifications"] != true || f["followedAt"] == nil ||
			f["connectionId"] != nil || f["allocationPct"] != 10.0 || f["scalingPct"] != 100.0 || f["maxPositionPct"] != 25.0 ||
			f["copyStopLossPct"] != 20.0 {
			t.Errorf("follow: %s", r.raw)
		}
		followID := f["id"].(string)
		for _, c := range []struct {
			key    string
			kv     []string
			status int
			field  string
		}{
			{carol, []string{"leaderProfileId", aliceProfile}, 409, ""},                                  // twice
			{alice, []string{"leaderProfileId", aliceProfile}, 409, ""},                                  // herself
			{carol, []string{"leaderProfileId", uuid.NewString()}, 404, ""},                              // unknown
			{bob, []string{"leaderProfileId", aliceProfile, "allocationPct", "0"}, 400, "allocationPct"}, // out of range
			{bob, []string{"leaderProfileId", aliceProfile, "scalingPct", "1001"}, 400, "scalingPct"},
			{bob, []string{"leaderProfileId", aliceProfile, "copyStopLossPct", "x"}, 400, "copyStopLossPct"},
			{bob, []string{"leaderProfileId", aliceProfile, "autoSync", "maybe"}, 400, "autoSync"},
			{bob, []string{"leaderProfileId", aliceProfile, "connectionId", aliceConn}, 404, ""}, // alice's connection
			{carol, []string{"leaderProfileId", uuid.NewString(), "autoSync", "true"}, 404, ""},
			{bob, []string{"leaderProfileId", "nope"}, 400, "leaderProfileId"},
		} {
			r := follow(c.key, c.kv...)
			if c.status == 400 {
				wantInvalid(t, fmt.Sprint(c.kv), r, c.field)
			} else if r.status != c.status {
				t.Errorf("follow %v: %d %s, want %d", c.kv, r.status, r.raw, c.status)
			}
		}
		// Auto-sync needs an active connection: carol has none.
		if r := ts.call(t, "PATCH", "/api/v1/copy-trading/follow/"+followID+"/sync?autoSync=true", carol); r.status != http.StatusConflict {
			t.Errorf("auto-sync without a connection: %d %s", r.status, r.raw)
		}
		// Bob follows with auto-sync through his only connection.
		bf := follow(bob, "leaderProfileId", aliceProfile, "autoSync", "true", "allocationPct", "12.5", "notifications", "false").object(t)
		if bf["autoSync"] != true || bf["connectionId"] == nil || bf["allocationPct"] != 12.5 || bf["notifications"] != false {
			t.Errorf("bob's follow: %v", bf)
		}
		following := ts.call(t, "GET", "/api/v1/copy-trading/following", carol).list(t)
		if len(following) != 1 || following[0]["leaderSlug"] != "alice-t" || following[0]["leaderDisplayName"] != "Alice Trades" {
			t.Errorf("following: %v", following)
		}
		if d := ts.call(t, "GET", "/api/v1/copy-trading/leaders/alice-t", carol).object(t); d["followers"] != 2.0 {
			t.Errorf("followers: %v", d["followers"])
		}
		r = ts.call(t, "PATCH", "/api/v1/copy-trading/follow/"+followID+"/sync?autoSync=false", carol)
		if s := r.object(t); s["id"] != followID || s["autoSync"] != false || s["updatedAt"] == nil || len(s) != 3 {
			t.Errorf("sync: %s", r.raw)
		}
		wantInvalid(t, "sync without autoSync", ts.call(t, "PATCH", "/api/v1/copy-trading/follow/"+followID+"/sync", carol), "autoSync")
		r = ts.call(t, "PATCH", "/api/v1/copy-trading/follow/"+followID+"?maxPositionPct=50&notifications=false", carol)
		if s := r.object(t); s["maxPositionPct"] != 50.0 || s["notifications"] != false || s["allocationPct"] != 10.0 {
			t.Errorf("patch: %s", r.raw)
		}
		wantInvalid(t, "patch", ts.call(t, "PATCH", "/api/v1/copy-trading/follow/"+followID+"?maxPositionPct=101", carol), "maxPositionPct")
		for _, c := range []struct{ method, path string }{
			{"DELETE", "/api/v1/copy-trading/follow/" + followID},
			{"PATCH", "/api/v1/copy-trading/follow/" + followID + "/sync?autoSync=true"},
			{"PATCH", "/api/v1/copy-trading/follow/" + followID + "?scalingPct=50"},
		} {
			if r := ts.call(t, c.method, c.path, bob); r.status != http.StatusNotFound {
				t.Errorf("bob: %s %s: %d %s", c.method, c.path, r.status, r.raw)
			}
		}
		if r := ts.call(t, "DELETE", "/api/v1/copy-trading/follow/"+followID, carol); r.status != 200 || r.object(t)["status"] != "unfollowed" {
			t.Errorf("unfollow: %s", r.raw)
		}
		if r := ts.call(t, "DELETE", "/api/v1/copy-trading/follow/"+followID, carol); r.status != http.StatusNotFound {
			t.Errorf("unfollow again: %d", r.status)
		}
		follow(carol, "leaderProfileId", aliceProfile).object(t) // following again after unfollowing is fine

		// Unpublishing: off the lists, followers notified, auto-sync off.
		if r := ts.call(t, "DELETE", "/api/v1/copy-trading/publish", alice); r.object(t)["status"] != "unpublished" {
			t.Errorf("unpublish: %s", r.raw)
		}
		if r := ts.call(t, "DELETE", "/api/v1/copy-trading/publish", alice); r.status != http.StatusNotFound {
			t.Errorf("unpublish again: %d", r.status)
		}
		if l := ts.call(t, "GET", "/api/v1/copy-trading/leaders", carol).list(t); len(l) != 1 || l[0]["slug"] != "bob-b" {
			t.Errorf("leaders after unpublishing: %v", l)
		}
		if r := ts.call(t, "GET", "/api/v1/copy-trading/leaders/alice-t", carol); r.status != http.StatusNotFound {
			t.Errorf("unpublished detail: %d", r.status)
		}
		for _, key := range []string{bob, carol} {
			n := ts.call(t, "GET", "/api/v1/notifications", key)
			items := n.list(t)
			if len(items) != 1 || items[0]["kind"] != "leader_unpublished" || items[0]["readAt"] != nil ||
				!strings.Contains(items[0]["message"].(string), "alice-t") {
				t.Fatalf("notifications: %s", n.raw)
			}
			// Another user's notification is not found.
			if r := ts.call(t, "POST", "/api/v1/notifications/"+items[0]["id"].(string)+"/read", alice); r.status != http.StatusNotFound {
				t.Errorf("alice reads another's notification: %d", r.status)
			}
			read := ts.call(t, "POST", "/api/v1/notifications/"+items[0]["id"].(string)+"/read", key).object(t)
			if read["readAt"] == nil {
				t.Errorf("read: %v", read)
			}
			if u := ts.call(t, "GET", "/api/v1/notifications?unread=true", key).list(t); len(u) != 0 {
				t.Errorf("unread after reading: %v", u)
			}
		}
		// Every follow stops and says why, auto-sync or not; it stays
		// listed, and auto-sync cannot be turned on again.
		for name, key := range map[string]string{"bob": bob, "carol": carol} {
			follows := ts.call(t, "GET", "/api/v1/copy-trading/following", key).list(t)
			if len(follows) != 1 || follows[0]["autoSync"] != false || follows[0]["stoppedReason"] != "the leader unpublished the profile" ||
				follows[0]["leaderSlug"] != "alice-t" {
				t.Errorf("%s's follow after unpublishing: %v", name, follows)
			}
		}
		if r := ts.call(t, "PATCH", "/api/v1/copy-trading/follow/"+bf["id"].(string)+"/sync?autoSync=true", bob); r.status != http.StatusConflict ||
			!strings.Contains(r.raw, "unpublished") {
			t.Errorf("auto-sync on after unpublishing: %d %s, want 409 saying the leader unpublished", r.status, r.raw)
		}
		// The slug is free again.
		publish(alice, "portfolioId", alicePF, "displayName", "Alice again", "slug", "alice-t").object(t)

		// A leader published minutes after connecting has one day of
		// history: no Sharpe ratio and no drawdown yet, so null, not 0.
		dave := mustKey(t, db, "dave@example.com", "pro")
		davePF, _ := mustPortfolio(t, ts, dave)
		publish(dave, "portfolioId", davePF, "displayName", "Dave", "slug", "dave-new").object(t)
		d = ts.call(t, "GET", "/api/v1/copy-trading/leaders/dave-new", carol)
		if detail := d.object(t); detail["sharpeRatio"] != nil || detail["maxDrawdown"] != nil || detail["totalReturn"] != 0.0 ||
			!strings.Contains(d.raw, `"sharpeRatio":null`) || !strings.Contains(d.raw, `"maxDrawdown":null`) {
			t.Errorf("a new leader's detail: %s", d.raw)
		}
		list = ts.call(t, "GET", "/api/v1/copy-trading/leaders?sortBy=sharpeRatio", carol)
		if items := list.list(t); len(items) != 3 || items[2]["slug"] != "dave-new" || items[2]["sharpeRatio"] != nil {
			t.Errorf("by Sharpe ratio, the leader without one last: %s", list.raw)
		}
	})
}

func TestCopyTradingStrategies(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		ts := startOrders(t, db, nil)
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		pf, _ := mustPortfolio(t, ts, alice)
		ts.call(t, "POST", "/api/v1/copy-trading/publish?"+query("portfolioId", pf, "displayName", "Alice", "slug", "alice"), alice).object(t)
		post := func(key string, kv ...string) response {
			return ts.call(t, "POST", "/api/v1/copy-trading/strategies?"+query(kv...), key)
		}
		r := post(alice, "strategyHash", "sha256:abc_DEF-1", "name", "Trend", "description", "SMA cross")
		s := r.object(t)
		if s["strategyHash"] != "sha256:abc_DEF-1" || s["name"] != "Trend" || s["description"] != "SMA cross" || s["publishedAt"] == nil {
			t.Errorf("publish: %s", r.raw)
		}
		post(bob, "strategyHash", "sha256:abc_DEF-1", "name", "Same hash, other author").object(t)
		if r := post(alice, "strategyHash", "sha256:abc_DEF-1", "name", "Again"); r.status != http.StatusConflict {
			t.Errorf("the same hash twice: %d %s", r.status, r.raw)
		}
		for _, c := range []struct {
			kv    []string
			field string
		}{
			{[]string{"name", "x"}, "strategyHash"},
			{[]string{"strategyHash", "has space", "name", "x"}, "strategyHash"},
			{[]string{"strategyHash", strings.Repeat("a", 129), "name", "x"}, "strategyHash"},
			{[]string{"strategyHash", "ok"}, "name"},
			{[]string{"strategyHash", "ok", "name", strings.Repeat("n", 101)}, "name"},
		} {
			wantInvalid(t, fmt.Sprint(c.kv), post(alice, c.kv...), c.field)
		}
		list := ts.call(t, "GET", "/api/v1/copy-trading/strategies", bob).list(t)
		if len(list) != 2 || list[0]["name"] != "Same hash, other author" || list[0]["authorSlug"] != nil ||
			list[1]["authorSlug"] != "alice" || list[1]["totalReturn"] != nil || list[1]["sharpeRatio"] != nil {
			t.Errorf("strategies: %v", list)
		}
		id := s["id"].(string)
		if r := ts.call(t, "DELETE", "/api/v1/copy-trading/strategies/"+id, bob); r.status != http.StatusNotFound {
			t.Errorf("bob deletes alice's: %d", r.status)
		}
		if r := ts.call(t, "DELETE", "/api/v1/copy-trading/strategies/"+id, alice); r.object(t)["status"] != "unpublished" {
			t.Errorf("delete: %s", r.raw)
		}
		if r := ts.call(t, "DELETE", "/api/v1/copy-trading/strategies/"+id, alice); r.status != http.StatusNotFound {
			t.Errorf("delete again: %d", r.status)
		}
		post(alice, "strategyHash", "sha256:abc_DEF-1", "name", "Back").object(t)
	})
}
