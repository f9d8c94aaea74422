package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
	"github.com/tradekit/tradekit/studies"
)

// BenchmarkIndicators measures the spec 4.7 endpoints on an asset with 10
// years of daily bars (2,520), uncached (a cache too small to hold
// anything, and price versions read per request) and cached, on both
// databases.
func BenchmarkIndicators(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		mustWalkAsset(b, db)            // 600 bars …
		w := newWalk(indAsset, 2520, 7) // … extended to 10 years
		if err := marketdata.NewStore(db).SavePrices(context.Background(), w.prices); err != nil {
			b.Fatal(err)
		}
		key, _ := benchKey(b, db)
		// As tradekit serve runs them: with the background work, which on
		// PostgreSQL keeps price versions current from notifications.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db)
		go srv.Maintain(ctx)
		cached := srv.Handler()
		uncached := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, CacheBytes: 1, Studies: studies.Config{CacheBytes: 1}}, db).Handler()
		waitWatching(b, db, srv.Studies())

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
			b.Run(c.name+"/uncached", func(b *testing.B) { benchIdentity(b, uncached, c.method, c.path, key) })
			b.Run(c.name+"/cached", func(b *testing.B) { benchIdentity(b, cached, c.method, c.path, key) })
		}
	})
}

// benchIdentity is benchLoopback with a client that asks for no
// compression: the figures are the server's work and the transfer, not the
// client's gunzip of a 113 KB series (about 1 ms), which a Go client that
// accepts gzip also pays.
func benchIdentity(b *testing.B, h http.Handler, method, path, key string) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	plain := srv.Client()
	tr := plain.Transport.(*http.Transport).Clone()
	tr.DisableCompression = true
	plain.Transport = tr
	benchURL(b, plain, method, srv.URL+path, key)
}
