package server_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// TestAssetListFollowsChanges checks that the full asset list, served
// from the cache of its encoding, shows an asset saved after it was
// cached, and a change of name, on the next request.
func TestAssetListFollowsChanges(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "assetlist@example.com", "free")
		st := marketdata.NewStore(db)
		save := func(symbol, name string) {
			t.Helper()
			a := marketdata.Asset{Symbol: symbol, Name: name, Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
			if err := st.SaveAsset(ctx, &a); err != nil {
				t.Fatal(err)
			}
		}
		names := func() map[string]any {
			t.Helper()
			r := get(t, h, "/api/v1/market-data/assets", key)
			if r.status != 200 {
				t.Fatalf("list: %d %s", r.status, r.raw)
			}
			out := map[string]any{}
			for _, a := range r.list(t) {
				out[a["symbol"].(string)] = a["name"]
			}
			return out
		}
		save("LSTA", "List A")
		if got := names(); got["LSTA"] != "List A" {
			t.Fatalf("first list: %v", got)
		}
		save("LSTB", "List B")
		save("LSTA", "List A renamed")
		if got := names(); got["LSTB"] != "List B" || got["LSTA"] != "List A renamed" {
			t.Errorf("list after saving: %v; want LSTB and LSTA's new name", got)
		}
		// Compressed (once per version) for a client that takes gzip: the
		// same bytes once inflated.
		plain, zipped := listBody(t, h, key, ""), listBody(t, h, key, "gzip")
		if plain != zipped || !strings.Contains(zipped, `"List A renamed"`) {
			t.Errorf("gzip list differs from the plain one:\n%.300s\n%.300s", zipped, plain)
		}
	})
}

// listBody returns the body of GET /api/v1/market-data/assets sent with
// the Accept-Encoding given, inflated if it came compressed.
func listBody(tb testing.TB, h http.Handler, key, encoding string) string {
	tb.Helper()
	req := httptest.NewRequest("GET", "/api/v1/market-data/assets", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if encoding != "" {
		req.Header.Set("Accept-Encoding", encoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		tb.Fatalf("list with Accept-Encoding %q: %d %s", encoding, rec.Code, rec.Body)
	}
	var body io.Reader = rec.Body
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			tb.Fatal(err)
		}
		body = zr
	} else if encoding == "gzip" {
		tb.Errorf("list with Accept-Encoding gzip came as %q", rec.Header().Get("Content-Encoding"))
	}
	b, err := io.ReadAll(body)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// benchListAssetsEnv sets the number of assets of BenchmarkAssetList
// (default 10,000, the market size).
const benchListAssetsEnv = "TRADEKIT_BENCH_ASSETS"

// BenchmarkAssetList measures GET /api/v1/market-data/assets, the full
// list, over a loopback socket with 10,000 assets (or
// $TRADEKIT_BENCH_ASSETS), on SQLite and on PostgreSQL: served from the
// cached encoding, one query for the list version per request. It
// reports p50 and p99 latency, and cold-ms, the first request after an
// asset was saved (read and encode the list again).
func BenchmarkAssetList(b *testing.B) {
	m := 10000
	if v := os.Getenv(benchListAssetsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a number of assets", benchListAssetsEnv, v)
		}
		m = n
	}
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		ctx := context.Background()
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			st := marketdata.NewStore(tx)
			for i := range m {
				a := marketdata.Asset{Symbol: fmt.Sprintf("L%05d", i), Name: fmt.Sprintf("List Test Company %d Inc.", i), Type: marketdata.Stock,
					ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
				if err := st.SaveAsset(ctx, &a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		key, _ := benchKey(b, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		b.Run(fmt.Sprintf("%d", m), func(b *testing.B) {
			a := marketdata.Asset{Symbol: "L00000", Name: "Renamed", Type: marketdata.Stock,
				ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
			if err := marketdata.NewStore(db).SaveAsset(ctx, &a); err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/api/v1/market-data/assets", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			rec := httptest.NewRecorder()
			t0 := time.Now()
			h.ServeHTTP(rec, req)
			cold := time.Since(t0)
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"Renamed"`) {
				b.Fatalf("cold list: %d %.200s", rec.Code, rec.Body)
			}
			benchLoopback(b, h, "GET", "/api/v1/market-data/assets", key)
			b.ReportMetric(float64(cold.Microseconds())/1000, "cold-ms")
		})
	})
}
