package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/jsonnum"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
	"github.com/tradekit/tradekit/profiles/profiledb"
	"github.com/tradekit/tradekit/server"
)

var (
	walk2Asset = marketdata.AssetID("WLK2")
	walk3Asset = marketdata.AssetID("WLK3")
	profilesAt = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
)

// mustStoreWalk stores an asset with the walk's bars.
func mustStoreWalk(tb testing.TB, db bun.IDB, id uuid.UUID, symbol string, w walk) {
	tb.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	a := marketdata.Asset{ID: id, Symbol: symbol, Name: symbol + " Inc", Type: marketdata.Stock,
		ExchangeID: uuid.MustParse(nyseID), Currency: "USD", IsActive: true}
	if err := st.SaveAsset(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	if err := st.SavePrices(ctx, w.prices); err != nil {
		tb.Fatal(err)
	}
}

// mustBuildProfiles runs the profile builder at profilesAt.
func mustBuildProfiles(tb testing.TB, db bun.IDB) {
	tb.Helper()
	_, err := profiledb.Build(context.Background(), marketdata.NewStore(db), profiledb.NewStore(db),
		profiledb.BuildConfig{Now: func() time.Time { return profilesAt }})
	if err != nil {
		tb.Fatal(err)
	}
}

// profileFixture stores the market-data fixture (ACME has 3 bars), WALK
// and WLK2 (600 bars each), builds the profiles, then stores WLK3 (300
// bars, not built). It returns WALK's and WLK2's profiles as the engine
// computes them, in their JSON form, decoded.
func profileFixture(tb testing.TB, db bun.IDB) (walkWant, walk2Want map[string]any) {
	tb.Helper()
	mustMarketData(tb, db)
	w1 := mustWalkAsset(tb, db)
	w2 := newWalk(walk2Asset, 600, 8)
	mustStoreWalk(tb, db, walk2Asset, "WLK2", w2)
	mustBuildProfiles(tb, db)
	mustStoreWalk(tb, db, walk3Asset, "WLK3", newWalk(walk3Asset, 300, 9))

	// The builder's peers are every asset with prices: ACME's three
	// closes are the fixture's, too few to overlap (and so left out).
	acme := profiles.Asset{ID: mdIDs.acme.String(), Symbol: "ACME", Bars: ohlcv.Series{Dates: []calendar.Date{d("2024-01-02"), d("2024-01-03"), d("2024-01-04")}, Close: []float64{101.5, 102, 12345.678901}}}
	peer := func(id uuid.UUID, sym string, w walk) profiles.Asset {
		return profiles.Asset{ID: id.String(), Symbol: sym, Bars: ohlcv.Series{Dates: w.dates, Close: w.close}}
	}
	peers := []profiles.Asset{acme, peer(indAsset, "WALK", w1), peer(walk2Asset, "WLK2", w2)}
	want := func(id uuid.UUID, sym string, w walk) map[string]any {
		p, err := profiles.Compute(profiles.Asset{ID: id.String(), Bars: ohlcv.Series{Dates: w.dates, High: w.high, Low: w.low, Close: w.close}},
			peers, profiles.Config{})
		if err != nil {
			tb.Fatal(err)
		}
		b, _ := json.Marshal(p)
		var m map[string]any
		json.Unmarshal(jsonnum.Round(b), &m) // as the API writes numbers
		m["assetId"], m["symbol"], m["updatedAt"] = id.String(), sym, "2026-11-22T10:00:00.000Z"
		return m
	}
	return want(indAsset, "WALK", w1), want(walk2Asset, "WLK2", w2)
}

// errorFields returns error.details.fields of an error envelope.
func (r response) errorFields() []any {
	e, _ := r.body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	f, _ := d["fields"].([]any)
	return f
}

func (r response) errorMessage() string {
	e, _ := r.body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func TestAssetProfileGet(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		walkWant, _ := profileFixture(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "profiles@example.com", "free")

		r := get(t, h, "/api/v1/asset-profiles/"+indAsset.String(), key)
		// Within 1e-9: a build computes the correlations of assets on the
		// calendar as a matrix product, rounded unlike profiles.Compute.
		if diff := cmp.Diff(walkWant, r.object(t), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("WALK's profile (-want +got):\n%s", diff)
		}
		// The ETag follows the profile's build time: 304 until it is rebuilt.
		if tag := r.header.Get("ETag"); tag == "" || sendIfNoneMatch(t, h, "/api/v1/asset-profiles/"+indAsset.String(), key, tag).Code != http.StatusNotModified {
			t.Errorf("profile ETag %q", tag)
		}
		if !strings.HasPrefix(r.raw, `{"data":{"assetId":"`+indAsset.String()+`","symbol":"WALK","regimePatterns":{"current":`) ||
			!strings.HasSuffix(r.raw, `,"updatedAt":"2026-11-22T10:00:00.000Z"}}`+"\n") {
			t.Errorf("field order is not assetId, symbol, …, updatedAt: %.120s … %s", r.raw, r.raw[len(r.raw)-60:])
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q", ct)
		}

		tests := []struct {
			name, id   string
			status     int
			code       string
			msg, field string
		}{
			{"malformed", "not-a-uuid", 400, "VALIDATION_ERROR", "assetId", "assetId"},
			{"unknown asset", "40000000-0000-4000-8000-0000000000ff", 404, "NOT_FOUND", "not found", ""},
			{"too few bars", mdIDs.acme.String(), 404, "NOT_FOUND", "no profile yet for asset ACME (" + mdIDs.acme.String() + "): it has 3 daily bars, 253 needed", ""},
			{"no prices", mdIDs.bolt.String(), 404, "NOT_FOUND", "it has 0 daily bars, 253 needed", ""},
			{"not built", walk3Asset.String(), 404, "NOT_FOUND", "no profile yet for asset WLK3 (" + walk3Asset.String() + "): not built yet", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := get(t, h, "/api/v1/asset-profiles/"+tt.id, key)
				if r.status != tt.status || r.errorCode() != tt.code || !strings.Contains(r.errorMessage(), tt.msg) {
					t.Errorf("got %d %s, want %d %s with %q", r.status, r.raw, tt.status, tt.code, tt.msg)
				}
				if tt.field != "" && !cmp.Equal(r.errorFields(), []any{tt.field}) {
					t.Errorf("details.fields = %v, want [%s]", r.errorFields(), tt.field)
				}
			})
		}
		if r := get(t, h, "/api/v1/asset-profiles/"+indAsset.String(), ""); r.status != http.StatusUnauthorized {
			t.Errorf("without a key: %d", r.status)
		}
	})
}

// idsQuery returns the path of the list form with the ids as assetIds[].
func idsQuery(ids ...string) string {
	return "/api/v1/asset-profiles?" + url.Values{"assetIds[]": ids}.Encode()
}

func TestAssetProfileList(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		walkWant, walk2Want := profileFixture(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "profiles@example.com", "free")
		reduced := func(full map[string]any) map[string]any {
			rp := full["regimePatterns"].(map[string]any)
			return map[string]any{"assetId": full["assetId"], "symbol": full["symbol"],
				"regimePatterns": map[string]any{"current": rp["current"]}, "strategyAffinity": full["strategyAffinity"],
				"volatility": full["volatility"], "updatedAt": full["updatedAt"]}
		}
		unknown := uuid.MustParse("40000000-0000-4000-8000-0000000000ff").String()

		// Request order, duplicates once, unknown ids and assets without
		// a profile left out.
		r := get(t, h, idsQuery(walk2Asset.String(), unknown, indAsset.String(), walk2Asset.String(), mdIDs.acme.String(), walk3Asset.String()), key)
		got := r.list(t)
		want := []map[string]any{reduced(walk2Want), reduced(walkWant)}
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("reduced profiles (-want +got):\n%s", diff)
		}

		// 50 distinct ids are fine; 51 are not; 51 values naming 50 ids are.
		fifty := []string{indAsset.String()}
		for i := len(fifty); i < 50; i++ {
			fifty = append(fifty, uuid.NewSHA1(uuid.Nil, []byte{byte(i)}).String())
		}
		if got := get(t, h, idsQuery(fifty...), key).list(t); len(got) != 1 || got[0]["symbol"] != "WALK" {
			t.Errorf("50 ids: %v", got)
		}
		if got := get(t, h, idsQuery(append(fifty, fifty[7])...), key).list(t); len(got) != 1 {
			t.Errorf("50 ids and a duplicate: %v", got)
		}
		// Without brackets too.
		if got := get(t, h, "/api/v1/asset-profiles?assetIds="+indAsset.String(), key).list(t); len(got) != 1 {
			t.Errorf("assetIds without brackets: %v", got)
		}

		tests := []struct {
			name, path string
			field, msg string
		}{
			{"51 ids", idsQuery(append(fifty, unknown)...), "assetIds[]", "at most 50 asset ids per request, got 51"},
			{"malformed", idsQuery(indAsset.String(), "nope"), "assetIds[]", `got "nope"`},
			{"empty value", idsQuery(""), "assetIds[]", "is empty"},
			{"no ids", "/api/v1/asset-profiles", "assetIds[]", "is required"},
			{"other parameter only", "/api/v1/asset-profiles?ids=" + indAsset.String(), "ids",
				"unknown parameter; the parameters are assetIds[], assetIds"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := get(t, h, tt.path, key)
				if r.status != 400 || r.errorCode() != "VALIDATION_ERROR" || !strings.Contains(r.errorMessage(), tt.msg) {
					t.Errorf("got %d %s, want 400 VALIDATION_ERROR with %q", r.status, r.raw, tt.msg)
				}
				if !cmp.Equal(r.errorFields(), []any{tt.field}) {
					t.Errorf("details.fields = %v, want [%s]", r.errorFields(), tt.field)
				}
			})
		}
	})
}

// BenchmarkAssetProfile measures GET /api/v1/asset-profiles/:assetId of an
// asset with 10 years of daily bars (2,520) through a loopback socket,
// and the list form for the same asset, on both databases.
func BenchmarkAssetProfile(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		mustStoreWalk(b, db, indAsset, "WALK", newWalk(indAsset, 2520, 7))
		mustStoreWalk(b, db, walk2Asset, "WLK2", newWalk(walk2Asset, 2520, 8))
		mustBuildProfiles(b, db)
		key, _ := benchKey(b, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		b.Run("full", func(b *testing.B) {
			benchLoopback(b, h, "GET", "/api/v1/asset-profiles/"+indAsset.String(), key)
		})
		b.Run("list", func(b *testing.B) {
			benchLoopback(b, h, "GET", idsQuery(indAsset.String(), walk2Asset.String()), key)
		})
	})
}
