package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// BenchmarkCopyLatency measures, on loopback with one server and its
// background work running, the time from a leader's market order being
// placed to the follower's mirrored order being recorded: the paper
// broker's fill, the order tracker seeing it, the leader's sync, and the
// copy engine's pass. It reports the median and the worst as p50-ms and
// max-ms:
//
//	go test ./server -run '^$' -bench CopyLatency -benchtime 20x
func BenchmarkCopyLatency(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		mustOrderAssets(b, db)
		ts := startOrders(b, db, nil)
		alice := mustKey(b, db, "alice@example.com", "business")
		bob := mustKey(b, db, "bob@example.com", "business")
		alicePF, aliceConn := mustPortfolio(b, ts, alice)
		mustPortfolio(b, ts, bob)
		profile := ts.call(b, "POST", "/api/v1/copy-trading/publish?"+query("portfolioId", alicePF, "displayName", "Alice", "slug", "alice"), alice).object(b)
		ts.call(b, "POST", "/api/v1/copy-trading/follow?"+query("leaderProfileId", profile["id"].(string), "autoSync", "true",
			"maxPositionPct", "100", "notifications", "false"), bob).object(b)
		ts.patchGuardrails(b, alice, "maxDailyTrades", "100000")
		ts.patchGuardrails(b, bob, "maxDailyTrades", "100000", "maxPositionSizePct", "100", "maxPortfolioRiskPct", "100")
		ctx := context.Background()
		var lat []time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			ts.order(b, alice, "connectionId", aliceConn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "10").object(b)
			deadline := t0.Add(10 * time.Second)
			for {
				// Read the database: polling the API would spend the
				// follower's rate limit.
				n, err := db.NewSelect().Table("broker_orders").Where("client_order_id LIKE 'copy-%'").Count(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if n > i {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("copy %d not placed within 10 s", i+1)
				}
				time.Sleep(5 * time.Millisecond)
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "max-ms")
	})
}
