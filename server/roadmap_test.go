package server_test

import (
	"context"
	"go/build"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/knowledge"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
	"github.com/tradekit/tradekit/profiles/profiledb"
	"github.com/tradekit/tradekit/server"
)

// TestRoadmapReleasedIsServed keeps the public roadmap honest: every item it
// calls released must name the routes or the Go packages that deliver it
// (the routes and packages keys of the content pack), every route must
// answer through the real router, on a database holding a slice of the demo
// data set, with something other than 404, 405 or a 5xx, and every package
// must exist in this module.
func TestRoadmapReleasedIsServed(t *testing.T) {
	t.Parallel()
	pack, err := knowledge.Load()
	if err != nil {
		t.Fatal(err)
	}
	var released []knowledge.RoadmapItem
	for _, it := range pack.Roadmap() {
		if it.Status != knowledge.StatusReleased {
			continue
		}
		released = append(released, it)
		if len(it.Routes) == 0 && len(it.Packages) == 0 {
			t.Errorf("released item %q names no routes and no packages: name what serves it, or do not call it released", it.Title)
		}
		for _, p := range it.Packages {
			if _, err := build.ImportDir(filepath.Join("..", filepath.FromSlash(p)), 0); err != nil {
				t.Errorf("released item %q: package %s: %v", it.Title, p, err)
			}
		}
	}
	if len(released) == 0 {
		t.Fatal("the roadmap has no released item")
	}

	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		params := mustRoadmapFixture(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Knowledge: pack}, db).Handler()
		key := mustKey(t, db, "roadmap@example.com", "pro")
		params["/api/v1/indicators/custom/:id"] = mustCustomIndicator(t, h, key)
		for _, it := range released {
			for _, route := range it.Routes {
				method, target, _ := strings.Cut(route, " ")
				path := fillRoute(t, target, params)
				req := httptest.NewRequest(method, path, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				checkExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
				switch code := rec.Code; {
				case code == http.StatusNotFound, code == http.StatusMethodNotAllowed, code >= 500:
					t.Errorf("released item %q: %s %s answers %d: %s", it.Title, method, path, code, rec.Body)
				default:
					t.Logf("%s %s: %d", method, path, code)
				}
			}
		}
	})
}

// fillRoute replaces each path parameter of target ("/…/assets/:id?x=1")
// with the value params holds for the pattern up to that parameter, and
// each query value written as a parameter ("?assetId=:assetId") with the
// value params holds for it (key ":assetId"); then it encodes the query.
func fillRoute(tb testing.TB, target string, params map[string]string) string {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatalf("route %q: %v", target, err)
	}
	value := func(key string) string {
		v, ok := params[key]
		if !ok {
			tb.Fatalf("route %q: no value for %s; add one to mustRoadmapFixture", target, key)
		}
		return v
	}
	pattern := strings.Split(u.Path, "/")
	segs := slices.Clone(pattern)
	for i, s := range pattern {
		if strings.HasPrefix(s, ":") {
			segs[i] = value(strings.Join(pattern[:i+1], "/"))
		}
	}
	u.Path = strings.Join(segs, "/")
	q := u.Query()
	for _, vs := range q {
		for i, v := range vs {
			if strings.HasPrefix(v, ":") {
				vs[i] = value(v)
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// mustRoadmapFixture loads the demo data set from 2025-06-02 (enough bars
// for every indicator and for the analytics profiles, which it builds) and
// returns a value for each path parameter of the routes, keyed by the
// route pattern up to the parameter. The caller adds the custom indicator
// (mustCustomIndicator), which needs a key.
func mustRoadmapFixture(tb testing.TB, db *bun.DB) map[string]string {
	tb.Helper()
	ctx := context.Background()
	set, err := demo.Generate(demo.Config{Start: calendar.NewDate(2025, 6, 2)})
	if err != nil {
		tb.Fatal(err)
	}
	err = marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
		return demo.Load(ctx, st, set)
	})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := profiledb.Build(ctx, marketdata.NewStore(db), profiledb.NewStore(db), profiledb.BuildConfig{}); err != nil {
		tb.Fatal(err)
	}

	pack, err := knowledge.Load()
	if err != nil {
		tb.Fatal(err)
	}
	var asset marketdata.Asset
	for _, a := range set.Assets {
		if a.Type == marketdata.Stock {
			asset = a
			break
		}
	}
	var exchange string
	for _, e := range calendar.Exchanges() {
		if asset.ExchangeID == marketdata.ExchangeID(e.Symbol) {
			exchange = e.Symbol
		}
	}
	var price marketdata.Price
	for _, p := range set.Prices {
		if p.AssetID == asset.ID {
			price = p
		}
	}
	id := asset.ID.String()
	return map[string]string{
		":assetId":                                     id,
		"/api/v1/market-data/assets/:id":               id,
		"/api/v1/market-data/assets/symbol/:symbol":    asset.Symbol,
		"/api/v1/market-data/industries/:id":           set.Industries[0].ID.String(),
		"/api/v1/market-data/indexes/:id":              set.Indexes[0].ID.String(),
		"/api/v1/market-data/indexes/symbol/:symbol":   set.Indexes[0].Symbol,
		"/api/v1/market-data/prices/asset/:assetId":    id,
		"/api/v1/market-data/prices/:id":               marketdata.PriceID(asset.ID, price.Date).String(),
		"/api/v1/market-data/exchanges/:id":            asset.ExchangeID.String(),
		"/api/v1/market-data/exchanges/symbol/:symbol": exchange,
		"/api/v1/indicators/asset/:assetId":            id,
		"/api/v1/asset-profiles/:assetId":              id,
		"/api/v1/knowledge/blog/posts/:slug":           pack.Posts(knowledge.PostFilter{})[0].Slug,
		"/api/v1/knowledge/glossary/terms/:slug":       pack.Terms()[0].Slug,
	}
}

// mustCustomIndicator creates a custom indicator through h and returns its id.
func mustCustomIndicator(tb testing.TB, h http.Handler, key string) string {
	tb.Helper()
	r := send(tb, h, http.MethodPost, "/api/v1/indicators/custom?"+url.Values{"name": {"Roadmap"}, "formula": {"close - open"}}.Encode(), key)
	return r.object(tb)["id"].(string)
}
