package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// BenchmarkOrderCost measures what a market order costs in all, with
// everything it causes: BenchmarkOrderPlace's orders, back to back, then
// a pause for the last fills to be read back and recorded. Per order it
// reports the wall time of the orders (ns/op), the statements sent
// through bun (on PostgreSQL each a round trip, the COMMIT messages of
// database.RunInTx coming on top; on SQLite BEGIN and COMMIT are among
// them), the CPU of this process (the client, the server, the paper
// broker and their background work, from getrusage) and, on PostgreSQL,
// the CPU of the backends serving the test database (from /proc; a
// backend that ends during the run is not counted):
//
//	go test ./server -run '^$' -bench OrderCost -benchtime 250x
func BenchmarkOrderCost(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		var statements atomic.Int64
		db.AddQueryHook(countQueries{&statements})
		ts, key, conn := startOrderBench(b, db)
		url := ts.url + "/api/v1/brokers/orders?" + query("connectionId", conn, "assetId", widgID.String(), "side", "buy",
			"type", "market", "quantity", "1", "stopLossPrice", "50")
		client := &http.Client{Timeout: 10 * time.Second}
		order := func() {
			req, _ := http.NewRequest("POST", url, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Fatalf("POST %s: %d", url, res.StatusCode)
			}
		}
		order() // warm the connections
		// The measurement's settling pauses, part of what docs/performance
		// reports: the warm-up's fills, then the last ones, are recorded.
		const settle = 100 * time.Millisecond
		time.Sleep(settle) // the warm-up's fills
		backends := func() map[int]time.Duration { return dbtest.BackendCPU(b, db) }
		pg0, go0, n0 := backends(), dbtest.ProcessCPU(), statements.Load()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			order()
		}
		b.StopTimer()
		time.Sleep(settle) // the last fills, read back and recorded
		goCPU, n := dbtest.ProcessCPU()-go0, statements.Load()-n0
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
		b.ReportMetric(float64(n)/float64(b.N), "statements/order")
		b.ReportMetric(per(goCPU), "go-cpu-ms/order")
		if db.Dialect().Name() == dialect.PG {
			var pgCPU time.Duration
			for pid, d := range backends() {
				pgCPU += d - pg0[pid] // a backend new since the start counts whole
			}
			b.ReportMetric(per(pgCPU), "pg-cpu-ms/order")
		}
	})
}

// countQueries counts the queries bun runs.
type countQueries struct{ n *atomic.Int64 }

// BeforeQuery implements bun.QueryHook.
func (h countQueries) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

// AfterQuery implements bun.QueryHook.
func (h countQueries) AfterQuery(context.Context, *bun.QueryEvent) { h.n.Add(1) }
