package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// BenchmarkOrderPlace measures POST /api/v1/brokers/orders on loopback,
// one request at a time: a market buy through a paper connection, with
// the five guardrails checked. Each request reads the account and the
// positions from the paper broker over HTTP, the asset's closes and
// ATR(14), counts the day's orders under the user's lock, records the
// order and sends it to the paper broker, which checks buying power and
// records it there. The matcher and the tracker are not running, so no
// fill or sync competes with the requests; the paper broker's open-order
// sum grows with b.N, so run it with a fixed count:
//
//	go test ./server -run '^$' -bench OrderPlace -benchtime 300x
func BenchmarkOrderPlace(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		mustOrderAssets(b, db)
		key, _ := benchKey(b, db)
		ts := startTradingWith(b, db, server.BrokersConfig{SyncInterval: -1, PaperCash: decimal.New(1, 12)})
		conn := connectPaper(b, ts, key)
		ts.patchGuardrails(b, key, "maxDailyTrades", "100000")
		url := ts.url + "/api/v1/brokers/orders?" + query("connectionId", conn, "assetId", widgID.String(), "side", "buy",
			"type", "market", "quantity", "1", "stopLossPrice", "50")
		benchURL(b, &http.Client{Timeout: 10 * time.Second}, "POST", url, key)
	})
}
