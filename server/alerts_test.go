package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts/webhook"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

func TestWatchlistRoutes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "watch@example.com", "free")
		r := send(t, h, "POST", "/api/v1/watchlists?name=Tech", key)
		if r.status != 200 {
			t.Fatalf("create: %d %s", r.status, r.raw)
		}
		id := r.body["data"].(map[string]any)["id"].(string)
		if r := send(t, h, "POST", "/api/v1/watchlists?name=Second", key); r.status != 403 ||
			r.body["error"].(map[string]any)["details"].(map[string]any)["limit"] != "watchlists" {
			t.Fatalf("second watchlist on free: %d %s; want 403 with limit watchlists", r.status, r.raw)
		}
		for _, asset := range []string{widgID.String(), bareID.String()} {
			if r := send(t, h, "POST", "/api/v1/watchlists/"+id+"/assets?assetId="+asset, key); r.status != 200 {
				t.Fatalf("add: %d %s", r.status, r.raw)
			}
		}
		r = get(t, h, "/api/v1/watchlists/"+id, key)
		if r.status != 200 {
			t.Fatalf("get: %d %s", r.status, r.raw)
		}
		assets := r.body["data"].(map[string]any)["assets"].([]any)
		widg := assets[0].(map[string]any)
		// WIDG closes rise by 0.25 a day to 57.25 (see mustOrderAssets).
		if len(assets) != 2 || widg["close"] != 57.25 || widg["change"] != 0.25 || widg["indicators"].(map[string]any)["SMA_20"] == nil {
			t.Errorf("watchlist assets %v", assets)
		}
		if bare := assets[1].(map[string]any); bare["close"] != nil || bare["date"] != nil {
			t.Errorf("an asset without prices: %v", bare)
		}
		if r := send(t, h, "PATCH", "/api/v1/watchlists/"+id+"?name=Renamed", key); r.status != 200 || r.body["data"].(map[string]any)["name"] != "Renamed" {
			t.Errorf("rename: %d %s", r.status, r.raw)
		}
		if r := send(t, h, "DELETE", "/api/v1/watchlists/"+id+"/assets/"+bareID.String(), key); r.status != 200 {
			t.Errorf("remove: %d %s", r.status, r.raw)
		}
		other := mustKey(t, db, "other@example.com", "free")
		if r := get(t, h, "/api/v1/watchlists/"+id, other); r.status != 404 {
			t.Errorf("another user's watchlist: %d", r.status)
		}
		if r := send(t, h, "DELETE", "/api/v1/watchlists/"+id, key); r.status != 200 {
			t.Errorf("delete: %d %s", r.status, r.raw)
		}
		if r := get(t, h, "/api/v1/watchlists", key); len(r.body["data"].([]any)) != 0 {
			t.Errorf("list after delete: %s", r.raw)
		}
	})
}

// hookReceiver records the deliveries it receives whose signature
// verifies with its secret.
type hookReceiver struct {
	mu       sync.Mutex
	secret   string
	verified int
	bad      int
}

func (hr *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	hr.mu.Lock()
	defer hr.mu.Unlock()
	if webhook.Verify(hr.secret, r.Header.Get(webhook.SignatureHeader), body, time.Now(), 5*time.Minute) == nil {
		hr.verified++
	} else {
		hr.bad++
	}
}

// webhookKey is the secret key of the servers whose tests make webhooks:
// without one, webhooks are refused.
var webhookKey = []byte("0123456789abcdef0123456789abcdef")

func TestAlertAndWebhookRoutes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		mustOrderAssets(t, db)
		srv := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, AllowPrivateWebhooks: true, Brokers: server.BrokersConfig{SecretKey: webhookKey}}, db)
		h := srv.Handler()
		key := mustKey(t, db, "alerts@example.com", "free")
		rcv := &hookReceiver{}
		hs := httptest.NewServer(rcv)
		defer hs.Close()
		r := send(t, h, "POST", "/api/v1/webhooks?url="+url.QueryEscape(hs.URL), key)
		if r.status != 200 {
			t.Fatalf("webhook: %d %s", r.status, r.raw)
		}
		hook := r.body["data"].(map[string]any)
		rcv.secret = hook["secret"].(string)
		if r := get(t, h, "/api/v1/webhooks", key); r.body["data"].([]any)[0].(map[string]any)["secret"] != nil {
			t.Errorf("the list shows the secret: %s", r.raw)
		}
		if r := send(t, h, "POST", "/api/v1/alerts?assetId="+widgID.String()+"&name=x&condition="+url.QueryEscape("sma(close) > 1"), key); r.status != 400 {
			t.Errorf("bad condition: %d %s", r.status, r.raw)
		}
		for i := range 5 { // free: 5 alerts
			q := "/api/v1/alerts?assetId=" + widgID.String() + "&name=above&condition=" + url.QueryEscape("close > 58")
			if i == 0 {
				q += "&webhookId=" + hook["id"].(string)
			}
			if r := send(t, h, "POST", q, key); r.status != 200 {
				t.Fatalf("alert %d: %d %s", i+1, r.status, r.raw)
			}
		}
		r = send(t, h, "POST", "/api/v1/alerts?assetId="+widgID.String()+"&name=x&condition=close", key)
		if r.status != 403 || r.body["error"].(map[string]any)["details"].(map[string]any)["limit"] != "alerts" {
			t.Fatalf("sixth alert on free: %d %s", r.status, r.raw)
		}
		list := get(t, h, "/api/v1/alerts", key).body["data"].([]any)
		first := list[0].(map[string]any)["id"].(string)
		for _, a := range list[1:] {
			send(t, h, "DELETE", "/api/v1/alerts/"+a.(map[string]any)["id"].(string), key)
		}
		// A new bar above 58, saved as an import saves it.
		today := time.Now().UTC()
		c := decimal.RequireFromString("60")
		bar := marketdata.Price{AssetID: widgID, Open: c, High: c, Low: c, Close: c, Volume: 1}
		bar.Date.Year, bar.Date.Month, bar.Date.Day = today.AddDate(0, 0, 1).Date()
		if err := marketdata.NewStore(db).SavePrices(ctx, []marketdata.Price{bar}); err != nil {
			t.Fatal(err)
		}
		if n, err := srv.Alerts().Evaluate(ctx); err != nil || n != 1 {
			t.Fatalf("Evaluate = %d, %v; want 1", n, err)
		}
		r = get(t, h, "/api/v1/alerts/"+first, key)
		a := r.body["data"].(map[string]any)
		if a["status"] != "triggered" || len(a["firings"].([]any)) != 1 {
			t.Errorf("alert after firing: %s", r.raw)
		}
		r = get(t, h, "/api/v1/notifications", key)
		if n := r.body["data"].([]any); len(n) != 1 || n[0].(map[string]any)["kind"] != "alert" {
			t.Errorf("notifications: %s", r.raw)
		}
		if _, err := srv.Alerts().Deliver(ctx); err != nil {
			t.Fatal(err)
		}
		r = get(t, h, "/api/v1/webhooks/"+hook["id"].(string)+"/deliveries", key)
		ds := r.body["data"].([]any)
		if len(ds) != 1 || ds[0].(map[string]any)["status"] != "succeeded" || rcv.verified != 1 || rcv.bad != 0 {
			t.Errorf("deliveries %s; receiver verified %d, refused %d", r.raw, rcv.verified, rcv.bad)
		}
		if r := send(t, h, "DELETE", "/api/v1/webhooks/"+hook["id"].(string), key); r.status != 200 {
			t.Errorf("delete webhook: %d %s", r.status, r.raw)
		}
	})
}

func TestWebhookRefusesLoopbackByDefault(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	key := mustKey(t, db, "ssrf@example.com", "free")
	r := send(t, h, "POST", "/api/v1/webhooks?url="+url.QueryEscape("http://127.0.0.1:9/x"), key)
	if r.status != 400 || r.errorCode() != "VALIDATION_ERROR" {
		t.Errorf("loopback webhook: %d %s; want 400", r.status, r.raw)
	}
}
