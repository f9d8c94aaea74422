package server_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestDashboardUsageAndNotifications checks two dashboard details of issue
// 40, point 15: Usage shows what the user holds of each counted limit
// (watchlists and alerts, not only broker connections), and the
// notifications of alerts are listed under Alerts, those of copy trading
// under Copy trading, each page marking its own read.
func TestDashboardUsageAndNotifications(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		mustOrderAssets(t, db)
		srv := httptest.NewServer(server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler())
		defer srv.Close()
		mustDashboardUserOn(t, db, "usage@example.com", "free", "usage password 1")
		u, err := billing.NewStore(db).UserByEmail(ctx, "usage@example.com")
		if err != nil {
			t.Fatal(err)
		}
		v := newVisitor(t, srv.URL)
		token := v.csrf(v.signIn("usage@example.com", "usage password 1"))

		v.post("/dashboard/watchlists", token, url.Values{"name": {"Tech"}}, 303)
		v.post("/dashboard/alerts", token, url.Values{"symbol": {"WIDG"}, "name": {"up"}, "condition": {"close > 1000"}, "once": {"on"}}, 303)
		page := mainOf(v.page("/dashboard/usage"))
		// The free plan: 1 watchlist, 5 alerts, 1 portfolio.
		for _, want := range []string{`<td>Watchlists</td><td class="num">1 of 1</td>`, `<td>Alerts</td><td class="num">1 of 5</td>`,
			`<td>Broker connections (portfolios)</td><td class="num">0 of 1</td>`} {
			if !strings.Contains(page, want) {
				t.Errorf("usage lacks %s:\n%s", want, page)
			}
		}

		now := time.Now().UTC()
		alert := alerts.Notification{ID: uuid.New(), UserID: u.ID, Kind: alerts.KindAlert, Message: "Alert fired for WIDG",
			Data: "{}", CreatedAt: now}
		trade := copytrading.Notification{ID: uuid.New(), UserID: u.ID, Kind: copytrading.KindLeaderTrade,
			Message: "Alice (alice) bought 40 ACME at 50", Data: "{}", CreatedAt: now}
		if _, err := db.NewInsert().Model(&alert).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewInsert().Model(&trade).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		alertsPage, copyPage := mainOf(v.page("/dashboard/alerts")), mainOf(v.page("/dashboard/copy-trading"))
		if !strings.Contains(alertsPage, alert.Message) || strings.Contains(alertsPage, trade.Message) {
			t.Errorf("Alerts shows the wrong notifications:\n%s", alertsPage)
		}
		if !strings.Contains(copyPage, trade.Message) || strings.Contains(copyPage, alert.Message) {
			t.Errorf("Copy trading shows the wrong notifications:\n%s", copyPage)
		}
		h, _ := v.post("/dashboard/alerts/notifications/"+alert.ID.String()+"/read", token, url.Values{}, 303)
		if !strings.HasPrefix(h.Get("Location"), "/dashboard/alerts") {
			t.Errorf("mark read sent to %q, want the Alerts page", h.Get("Location"))
		}
		var read []string
		if err := db.NewSelect().Table("notifications").Column("kind").Where("read_at IS NOT NULL").Scan(ctx, &read); err != nil {
			t.Fatal(err)
		}
		if len(read) != 1 || read[0] != alerts.KindAlert {
			t.Errorf("read notifications %v, want the alert's only", read)
		}
	})
}
