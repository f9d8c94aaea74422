package feed_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/marketdata/feed/feedtest"
)

// BenchmarkRunMonth measures the target (at most 10 s): a month
// of grouped daily bars for 500 tickers, with one split and one dividend,
// from a fake Massive into a fresh database, assets created. Each
// iteration runs on a database of its own.
//
//	go test ./marketdata/feed -run '^$' -bench RunMonth -benchtime 3x
func BenchmarkRunMonth(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, _ *bun.DB) {
		m := feedtest.NewMarket(500, novFrom, novTo)
		b.ReportAllocs()
		for range b.N {
			b.StopTimer()
			var db *bun.DB
			if b.Name() == "BenchmarkRunMonth/sqlite" {
				db = dbtest.SQLite(b)
			} else {
				db = dbtest.Postgres(b)
			}
			srv := feedtest.NewMassive(b, m)
			r := &feed.Runner{DB: db, Provider: mustMassive(b, srv, nil)}
			b.StartTimer()
			res, err := r.Run(context.Background(), novFrom, novTo)
			if err != nil || res.Err() != nil || res.Rows != 10000 {
				b.Fatalf("Run = %s, %v, %v", res, err, res.Err())
			}
		}
	})
}
