package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/server"
)

// BenchmarkCopyLatency measures, on loopback with one server and its
// background work running, the time from a leader's market order filling
// at the paper broker to the follower's mirrored order being recorded:
// the order read back after it was sent, the fill recorded in the
// leader's ledger, the copy engine woken by it, and the copy checked and
// placed through the follower's guardrails. Each time is the copy's
// created_at less the leader order's filled_at, both on the server's
// clock. It reports the median and the 99th percentile as p50-ms and
// p99-ms:
//
//	go test ./server -run '^$' -bench CopyLatency -benchtime 100x
func BenchmarkCopyLatency(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		mustOrderAssets(b, db)
		// The paper broker counts every request against its rate limit,
		// as in production, but with a limit the benchmark never reaches:
		// at 200 a minute the follower's copies (a placement and the
		// reads of its fill each) ran into it after about 95 orders, and
		// the copy waited for the order tracker.
		ts := startOrdersWith(b, db, server.BrokersConfig{PaperRequestsPerMinute: 1 << 30})
		alice := mustKey(b, db, "alice@example.com", "business")
		bob := mustKey(b, db, "bob@example.com", "business")
		alicePF, aliceConn := mustPortfolio(b, ts, alice)
		mustPortfolio(b, ts, bob)
		profile := ts.call(b, "POST", "/api/v1/copy-trading/publish?"+query("portfolioId", alicePF, "displayName", "Alice", "slug", "alice"), alice).object(b)
		ts.call(b, "POST", "/api/v1/copy-trading/follow?"+query("leaderProfileId", profile["id"].(string), "autoSync", "true",
			"maxPositionPct", "100", "notifications", "false"), bob).object(b)
		ts.patchGuardrails(b, alice, "maxDailyTrades", "100000", "maxPositionSizePct", "100", "maxPortfolioRiskPct", "100")
		ts.patchGuardrails(b, bob, "maxDailyTrades", "100000", "maxPositionSizePct", "100", "maxPortfolioRiskPct", "100")
		ctx := context.Background()
		var lat []time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			o := ts.order(b, alice, "connectionId", aliceConn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "10").object(b)
			// Read the database: polling the API would spend the
			// follower's rate limit. The latency is the rows' own, not
			// the polls'.
			var row struct {
				Filled *time.Time `bun:"filled_at"`
				Copied *time.Time `bun:"copied_at"`
			}
			testkit.Eventually(b, 10*time.Second, func() bool {
				err := db.NewSelect().TableExpr("broker_orders AS o").ColumnExpr("o.filled_at").
					ColumnExpr("(SELECT max(c.created_at) FROM copy_events AS e JOIN broker_orders AS c ON c.id = e.order_id WHERE e.fill_id = o.broker_order_id) AS copied_at").
					Where("o.id = ?", o["id"]).Scan(ctx, &row)
				if err != nil {
					b.Fatal(err)
				}
				return row.Filled != nil && row.Copied != nil
			}, "copy %d to be placed", i+1)
			lat = append(lat, row.Copied.Sub(*row.Filled))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	})
}
