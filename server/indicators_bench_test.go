package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
	"github.com/tradekit/tradekit/studies"
)

// benchLoopback serves h on a loopback socket and runs b.N GETs (or
// POSTs) of path, reporting p50 and p99 latency beside ns/op.
func benchLoopback(b *testing.B, h http.Handler, method, path, key string) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	do := func() {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s %s: %d", method, path, res.StatusCode)
		}
	}
	do() // warm the connection (and the cache, where there is one)
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		do()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkIndicators measures the spec 4.7 endpoints on an asset with 10
// years of daily bars (2,520), uncached (a cache too small to hold
// anything) and cached, on both databases.
func BenchmarkIndicators(b *testing.B) {
	for _, dbName := range []string{"sqlite", "postgres"} {
		b.Run(dbName, func(b *testing.B) {
			var db *bun.DB
			if dbName == "sqlite" {
				db = dbtest.SQLite(b)
			} else {
				db = dbtest.Postgres(b)
			}
			mustWalkAsset(b, db)            // 600 bars …
			w := newWalk(indAsset, 2520, 7) // … extended to 10 years
			if err := marketdata.NewStore(db).SavePrices(context.Background(), w.prices); err != nil {
				b.Fatal(err)
			}
			key, _ := benchKey(b, db)
			cached := server.New(server.Config{Logger: quietLogger()}, db).Handler()
			uncached := server.New(server.Config{Logger: quietLogger(), Studies: studies.Config{CacheBytes: 1}}, db).Handler()

			create := send(b, cached, "POST", "/api/v1/indicators/custom?"+url.Values{
				"name":    {"three calls"},
				"formula": {"(close - sma(close, 20)) / stddev(close, 20) + rsi(close, 14) / 100"},
			}.Encode(), key).object(b)
			evaluate := "/api/v1/indicators/custom/" + create["id"].(string) + "/evaluate?assetId=" + indAsset.String()
			rsi := seriesPath("RSI", `{"period":14}`, "", "")
			summary := "/api/v1/indicators/asset/" + indAsset.String() + "/summary"

			for _, c := range []struct {
				name, method, path string
			}{
				{"rsi-10y", "GET", rsi},
				{"summary", "GET", summary},
				{"formula-3-calls-10y", "POST", evaluate},
			} {
				b.Run(c.name+"/uncached", func(b *testing.B) { benchLoopback(b, uncached, c.method, c.path, key) })
				b.Run(c.name+"/cached", func(b *testing.B) { benchLoopback(b, cached, c.method, c.path, key) })
			}
		})
	}
}
