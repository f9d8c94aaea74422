package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/server"
	"github.com/tradekit/tradekit/studies"
)

// BenchmarkOrderPlace measures POST /api/v1/brokers/orders on loopback,
// one request at a time: a market buy through a paper connection, with
// the five guardrails checked. Each request checks the order against the
// connection's ledger and the asset's stored quote (latest close and
// ATR(14), computed once per price version), counts the day's orders and
// records the order with its reservation under the user's lock, and sends
// it to the paper broker, which checks buying power and records it there. The paper broker's matcher runs, as in a server, so
// the orders fill and the account holds one growing position; Tradekit's
// order tracker and syncs do not, so that they do not compete with the
// requests. The business plan allows 600 requests a minute, so run it
// with a fixed count:
//
//	go test ./server -run '^$' -bench OrderPlace -benchtime 300x
func BenchmarkOrderPlace(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		ts, key, conn := startOrderBench(b, db)
		url := ts.url + "/api/v1/brokers/orders?" + query("connectionId", conn, "assetId", widgID.String(), "side", "buy",
			"type", "market", "quantity", "1", "stopLossPrice", "50")
		benchURL(b, &http.Client{Timeout: 10 * time.Second}, "POST", url, key)
	})
}

// BenchmarkOrderPreview measures POST /api/v1/brokers/orders?preview=true
// on loopback, one request at a time: the five guardrails checked against
// the connection's exposure ledger (a position, and an open limit order
// holding a reservation) and the asset's stored quote, with nothing
// recorded and no broker read:
//
//	go test ./server -run '^$' -bench OrderPreview -benchtime 300x
func BenchmarkOrderPreview(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		ts, key, conn := startOrderBench(b, db)
		ts.order(b, key, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "5").object(b)
		ts.order(b, key, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "limit", "quantity", "5",
			"limitPrice", "1").object(b)
		url := ts.url + "/api/v1/brokers/orders?" + query("connectionId", conn, "assetId", widgID.String(), "side", "buy",
			"type", "market", "quantity", "1", "stopLossPrice", "50", "preview", "true")
		benchURL(b, &http.Client{Timeout: 10 * time.Second}, "POST", url, key)
	})
}

// startOrderBench starts what the order benchmarks measure: a server
// with the order assets, a user on the business plan (600 requests a
// minute, 25 portfolios) connected to the paper broker, with no limit of
// trades a day and no paper rate limit. The paper broker's matcher and the price-version
// listener (price versions from memory on PostgreSQL, as a server has
// them) run until the benchmark ends; Tradekit's order tracker and syncs
// do not. It returns the server, the user's key and the connection's id.
func startOrderBench(b *testing.B, db *bun.DB) (tradingServer, string, string) {
	b.Helper()
	mustOrderAssets(b, db)
	key := mustKey(b, db, "trader@example.com", "business")
	// The paper broker counts every request against its rate limit, as
	// in production, but with a limit the benchmark never reaches: at
	// 200 a minute it would measure the broker's 429s (orders left
	// pending for the tracker) instead.
	ts := startTradingWith(b, db, server.BrokersConfig{SyncInterval: -1, PaperCash: decimal.New(1, 12), PaperRequestsPerMinute: 1 << 30})
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go ts.Paper().Run(ctx)
	go ts.Studies().Watch(ctx)
	waitWatching(b, db, ts.Studies())
	conn := connectPaper(b, ts, key)
	ts.patchGuardrails(b, key, "maxDailyTrades", "100000")
	return ts, key, conn
}

// waitWatching waits until s keeps price versions in memory, as a running
// server does on PostgreSQL (on SQLite it never does, and returns at once).
func waitWatching(b *testing.B, db *bun.DB, s *studies.Service) {
	b.Helper()
	if db.Dialect().Name() != dialect.PG {
		return
	}
	testkit.Eventually(b, 10*time.Second, s.Watching, "price versions to be watched")
}
