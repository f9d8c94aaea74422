package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// sendIfNoneMatch sends GET path with the key and an If-None-Match.
func sendIfNoneMatch(tb testing.TB, h http.Handler, path, key, etag string) *httptest.ResponseRecorder {
	tb.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkExchange(tb, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

// TestPriceDocuments checks the price lists served from the cached
// documents: range edges, latest, conditional requests, and a price
// change seen by the next request.
func TestPriceDocuments(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db) // WIDG: 30 days up to today, closes 50 to 57.25
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "prices@example.com", "business")
		today := calendar.DateOf(time.Now().UTC())
		base := "/api/v1/market-data/prices/asset/" + widgID.String()
		dates := func(path string) string {
			var ds []string
			for _, p := range get(t, h, path, key).list(t) {
				ds = append(ds, p["date"].(string))
			}
			return fmt.Sprint(len(ds), ds)
		}
		first, last := today.AddDays(-29), today
		for q, want := range map[string]string{
			"": "30",
			"?from=" + first.String() + "&to=" + first.String():                       fmt.Sprint(1, []string{first.String()}),
			"?from=" + last.String():                                                  fmt.Sprint(1, []string{last.String()}),
			"?to=" + first.AddDays(-1).String():                                       "0 []",
			"?from=" + last.AddDays(1).String():                                       "0 []",
			"?from=" + first.AddDays(1).String() + "&to=" + first.AddDays(2).String(): fmt.Sprint(2, []string{first.AddDays(1).String(), first.AddDays(2).String()}),
		} {
			if got := dates(base + q); !strings.HasPrefix(got, want) {
				t.Errorf("%s: %s, want %s", q, got, want)
			}
		}
		l := get(t, h, base+"/latest", key).object(t)
		if l["date"] != today.String() || l["close"] != 57.25 {
			t.Errorf("latest: %v", l)
		}
		// By id, from the same document: the record, and 404 for a day
		// without one.
		byID := "/api/v1/market-data/prices/" + priceID(widgID, first.String())
		if p := get(t, h, byID, key).object(t); p["date"] != first.String() || p["close"] != 50.0 || p["id"] != priceID(widgID, first.String()) {
			t.Errorf("by id: %v", p)
		}
		if r := get(t, h, "/api/v1/market-data/prices/"+priceID(widgID, first.AddDays(-1).String()), key); r.status != 404 {
			t.Errorf("by id, a day without a record: %d", r.status)
		}
		if r := get(t, h, "/api/v1/market-data/prices/"+priceID(bareID, first.String()), key); r.status != 404 {
			t.Errorf("by id, an asset without prices: %d", r.status)
		}

		// Conditional requests: 304 without a body while the prices stay,
		// 200 with a new ETag after any change.
		r := sendIfNoneMatch(t, h, base+"?from="+first.String(), key, "")
		etag := r.Header().Get("ETag")
		if r.Code != 200 || etag == "" {
			t.Fatalf("no ETag: %d %v", r.Code, r.Header())
		}
		for _, inm := range []string{etag, "W/" + etag, `"x", ` + etag, "*"} {
			if r := sendIfNoneMatch(t, h, base+"?from="+first.String(), key, inm); r.Code != http.StatusNotModified || r.Body.Len() != 0 ||
				r.Header().Get("ETag") != etag {
				t.Errorf("If-None-Match %s: %d, %d bytes", inm, r.Code, r.Body.Len())
			}
		}
		if r := sendIfNoneMatch(t, h, base+"?from="+first.AddDays(1).String(), key, etag); r.Code != 200 {
			t.Errorf("another range with the first range's ETag: %d", r.Code)
		}
		latestTag := sendIfNoneMatch(t, h, base+"/latest", key, "").Header().Get("ETag")
		c := decimal.RequireFromString("61.125")
		if err := marketdata.NewStore(db).SavePrices(context.Background(), []marketdata.Price{{AssetID: widgID, Date: today,
			Open: c, High: c, Low: c, Close: c, Volume: 7}}); err != nil {
			t.Fatal(err)
		}
		r = sendIfNoneMatch(t, h, base+"?from="+first.String(), key, etag)
		if r.Code != 200 || r.Header().Get("ETag") == etag || !strings.Contains(r.Body.String(), `"close":61.125,"volume":7}`) {
			t.Errorf("after a price change: %d %s", r.Code, r.Header().Get("ETag"))
		}
		if r := sendIfNoneMatch(t, h, base+"/latest", key, latestTag); r.Code != 200 || !strings.Contains(r.Body.String(), "61.125") {
			t.Errorf("latest after a price change: %d %s", r.Code, r.Body)
		}
		// Indicator series too: 304 while the prices stay, 200 after.
		sma := "/api/v1/indicators/asset/" + widgID.String() + "?indicator=SMA&params=%7B%22period%22%3A5%7D"
		r = sendIfNoneMatch(t, h, sma, key, "")
		tag := r.Header().Get("ETag")
		if r.Code != 200 || tag == "" || sendIfNoneMatch(t, h, sma, key, tag).Code != http.StatusNotModified {
			t.Errorf("indicator ETag: %d %q", r.Code, tag)
		}
		if r := sendIfNoneMatch(t, h, sma+"&from="+first.String(), key, tag); r.Code != 200 {
			t.Errorf("another indicator request with the first one's ETag: %d", r.Code)
		}
		c2 := decimal.RequireFromString("62")
		if err := marketdata.NewStore(db).SavePrices(context.Background(), []marketdata.Price{{AssetID: widgID, Date: today,
			Open: c2, High: c2, Low: c2, Close: c2, Volume: 8}}); err != nil {
			t.Fatal(err)
		}
		if r := sendIfNoneMatch(t, h, sma, key, tag); r.Code != 200 || r.Header().Get("ETag") == tag {
			t.Errorf("indicator after a price change: %d", r.Code)
		}
		if r := get(t, h, "/api/v1/market-data/prices/asset/"+bareID.String()+"/latest", key); r.status != 404 || r.header.Get("ETag") != "" ||
			!strings.Contains(r.errorMessage(), "has no prices") {
			t.Errorf("latest without prices: %d %s", r.status, r.raw)
		}
	})
}

// TestPriceDocumentsConcurrentImport rewrites every close of an asset
// while the list is read: each answer holds one import's closes, never a
// mix.
func TestPriceDocumentsConcurrentImport(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "prices@example.com", "business")
		path := "/api/v1/market-data/prices/asset/" + widgID.String()
		var old []marketdata.Price
		old, err := marketdata.NewStore(db).Prices(context.Background(), widgID, calendar.Date{}, calendar.Date{})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done)
			for k := 1; k <= 20; k++ {
				c := decimal.NewFromInt(int64(1000 + k))
				ps := make([]marketdata.Price, len(old))
				for i, p := range old {
					p.Open, p.High, p.Low, p.Close = c, c, c, c
					ps[i] = p
				}
				if err := marketdata.NewStore(db).SavePrices(context.Background(), ps); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		reads := 0
		for {
			select {
			case <-done:
				wg.Wait()
				if reads == 0 {
					t.Error("no read ran beside the imports")
				}
				return
			default:
			}
			list := get(t, h, path, key).list(t)
			closes := map[any]bool{}
			for _, p := range list {
				closes[p["close"]] = true
			}
			// Before any import the 30 closes differ; after one they are
			// all that import's.
			if len(list) != 30 || len(closes) != 1 && len(closes) != 30 {
				t.Fatalf("a list of %d records with %d distinct closes: a mix", len(list), len(closes))
			}
			reads++
		}
	})
}
