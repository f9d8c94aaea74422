package dbcopy

import (
	"context"
	"testing"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// benchPrices is how many price rows BenchmarkCopy adds to the demo data
// set.
const benchPrices = 500_000

// BenchmarkCopy copies the demo data set (`tradekit seed`'s, 2016 to
// 2026) plus 500,000 generated price rows from SQLite into a fresh
// PostgreSQL database, checksums and all: the figure of
// docs/performance.md. Run it alone:
//
//	go test ./internal/dbcopy -run '^$' -bench Copy -benchtime 3x
func BenchmarkCopy(b *testing.B) {
	ctx := context.Background()
	src := dbtest.SQLite(b)
	mustSeed(b, src, calendar.Date{})
	// Dates before the demo's, for every asset, until benchPrices rows;
	// decimals as the application writes them (decimal.String).
	if _, err := src.ExecContext(ctx, `WITH RECURSIVE d(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n < 9999),
		a(id, i) AS (SELECT id, row_number() OVER (ORDER BY id) - 1 FROM assets)
		INSERT INTO prices (asset_id, date, open, high, low, close, volume)
		SELECT a.id, date('2015-12-31', '-' || d.n || ' days'),
			printf('%d.%d', 10 + d.n % 90, 1 + d.n % 9), printf('%d.%d', 11 + d.n % 90, 1 + d.n % 9),
			printf('%d.%d', 9 + d.n % 90, 1 + d.n % 9), printf('%d.%03d', 10 + d.n % 90, 1 + d.n % 997), 1000 + d.n * 7
		FROM a, d WHERE d.n * (SELECT count(*) FROM assets) + a.i < ?`, benchPrices); err != nil {
		b.Fatal(err)
	}
	if _, err := src.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	var rows int64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dst := dbtest.Postgres(b)
		b.StartTimer()
		res, err := Copy(ctx, src, dst, Options{})
		if err != nil {
			b.Fatal(err)
		}
		rows = res.Rows
	}
	b.ReportMetric(float64(rows), "rows")
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
