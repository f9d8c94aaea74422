package server_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/jsonnum"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// Exchange ids as the migration stores them (uuid v5 of "exchange:SYMBOL"
// in marketdata.Namespace, computed once by hand with Python's uuid.uuid5).
const (
	nyseID   = "d30d4255-6f11-5d39-a7d1-bbef5fbe2ec8"
	nasdaqID = "3025c928-a5a1-5cef-ba8c-45c81ac9ceea"
	cryptoID = "cec90647-3447-51c1-85fe-056e983871cc"
	lseID    = "12fdcb1c-ba29-556c-833a-abdb17ab28a5"
)

// mdNow is the server clock of the market-data tests.
var mdNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// mdIDs are the fixed ids of the fixture.
var mdIDs = struct {
	tech, energy, software, appSoftware, consulting uuid.UUID
	acme, bolt, core, zeta                          uuid.UUID
	index                                           uuid.UUID
}{
	tech: uuid.MustParse("10000000-0000-4000-8000-000000000001"), energy: uuid.MustParse("10000000-0000-4000-8000-000000000002"),
	software: uuid.MustParse("10000000-0000-4000-8000-000000000003"), appSoftware: uuid.MustParse("10000000-0000-4000-8000-000000000004"),
	consulting: uuid.MustParse("10000000-0000-4000-8000-000000000005"),
	acme:       uuid.MustParse("20000001-0000-4000-8000-000000000001"), bolt: uuid.MustParse("20000002-0000-4000-8000-000000000002"),
	core: uuid.MustParse("20000003-0000-4000-8000-000000000003"), zeta: uuid.MustParse("20000004-0000-4000-8000-000000000004"),
	index: uuid.MustParse("30000000-0000-4000-8000-000000000001"),
}

func ptr[T any](v T) *T { return &v }

func d(s string) calendar.Date {
	x, err := calendar.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return x
}

// mustMarketData stores a small universe: two sectors, one industry group
// with two industries, four assets, an index whose membership changes, a
// few prices, a profile and fundamentals.
func mustMarketData(tb testing.TB, db bun.IDB) {
	tb.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	ids := mdIDs
	for _, n := range []marketdata.Industry{
		{ID: ids.tech, Name: "Technology", Level: marketdata.Sector},
		{ID: ids.energy, Name: "Energy", Level: marketdata.Sector},
		{ID: ids.software, Name: "Software & Services", Level: marketdata.IndustryGroup, ParentID: &ids.tech},
		{ID: ids.appSoftware, Name: "Application Software", Level: marketdata.IndustryLevel, ParentID: &ids.software},
		{ID: ids.consulting, Name: "IT Consulting", Level: marketdata.IndustryLevel, ParentID: &ids.software},
	} {
		must(st.SaveIndustry(ctx, &n))
	}
	for _, a := range []marketdata.Asset{
		{ID: ids.acme, Symbol: "ACME", Name: "Acme Widgets", Type: marketdata.Stock, ExchangeID: uuid.MustParse(nyseID), Currency: "USD", IsActive: true, IndustryID: &ids.appSoftware},
		{ID: ids.bolt, Symbol: "bolt", Name: "Bolt Systems", Type: marketdata.Stock, ExchangeID: uuid.MustParse(nasdaqID), Currency: "usd", IsActive: true, IndustryID: &ids.appSoftware},
		{ID: ids.core, Symbol: "CORE", Name: "Core Consulting", Type: marketdata.Stock, ExchangeID: uuid.MustParse(nasdaqID), Currency: "USD", IsActive: false, IndustryID: &ids.consulting},
		{ID: ids.zeta, Symbol: "ZETA-USD", Name: "Zeta Coin", Type: marketdata.Crypto, ExchangeID: uuid.MustParse(cryptoID), Currency: "USD", IsActive: true},
	} {
		must(st.SaveAsset(ctx, &a))
	}
	x := marketdata.Index{ID: ids.index, Symbol: "TKX3", Name: "Tradekit Three", Description: "Three test stocks"}
	must(st.SaveIndex(ctx, &x))
	must(st.SaveConstituent(ctx, marketdata.Constituent{IndexID: ids.index, AssetID: ids.acme, From: d("2020-01-02")}))
	must(st.SaveConstituent(ctx, marketdata.Constituent{IndexID: ids.index, AssetID: ids.bolt, From: d("2020-01-02"), To: d("2022-01-03")}))
	must(st.SaveConstituent(ctx, marketdata.Constituent{IndexID: ids.index, AssetID: ids.core, From: d("2022-01-03")}))
	dec := decimal.RequireFromString
	must(st.SavePrices(ctx, []marketdata.Price{
		{AssetID: ids.acme, Date: d("2024-01-03"), Open: dec("101.5"), High: dec("103.25"), Low: dec("100.75"), Close: dec("102"), Volume: 9000000000},
		{AssetID: ids.acme, Date: d("2024-01-02"), Open: dec("100"), High: dec("102.125"), Low: dec("99.875"), Close: dec("101.5"), Volume: 1200},
		{AssetID: ids.acme, Date: d("2024-01-04"), Open: dec("102"), High: dec("102.000001"), Low: dec("0.000001"), Close: dec("12345.678901"), Volume: 0},
	}))
	must(st.SaveProfile(ctx, marketdata.Profile{AssetID: ids.acme, Description: "Makes widgets.", Sector: "Technology",
		Industry: "Application Software", MarketCap: dec("1234567890.5"), Website: "https://acme.example", LogoURL: "https://acme.example/logo.png"}))
	must(st.SaveFundamentals(ctx, marketdata.Fundamentals{AssetID: ids.acme, PERatio: dec("21.4"), EPS: dec("4.77"),
		Revenue: dec("9870000000"), MarketCap: dec("1234567890.5"), DividendYield: dec("0.0125"), Beta: dec("1.08"),
		UpdatedAt: time.Date(2026, 10, 30, 21, 0, 0, 0, time.UTC)}))
}

// priceID is the id of an asset's record on date, built as marketdata
// documents it: the asset id's first 12 bytes with version 8, then the
// days since 1900-01-01.
func priceID(asset uuid.UUID, date string) string {
	id := asset
	id[6] = id[6]&0x0f | 0x80
	t, err := time.Parse("2006-01-02", date)
	if err != nil {
		panic(err)
	}
	binary.BigEndian.PutUint32(id[12:], uint32(t.Sub(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)).Hours()/24))
	return id.String()
}

func TestMarketDataEndpoints(t *testing.T) {
	t.Parallel()
	ids := mdIDs
	acmeJSON := fmt.Sprintf(`{"id":"%s","symbol":"ACME","name":"Acme Widgets","type":"stock","exchangeId":"%s","currency":"USD","isActive":true}`, ids.acme, nyseID)
	p0102 := fmt.Sprintf(`{"id":"%s","assetId":"%s","date":"2024-01-02","open":100,"high":102.125,"low":99.875,"close":101.5,"volume":1200}`, priceID(ids.acme, "2024-01-02"), ids.acme)
	p0103 := fmt.Sprintf(`{"id":"%s","assetId":"%s","date":"2024-01-03","open":101.5,"high":103.25,"low":100.75,"close":102,"volume":9000000000}`, priceID(ids.acme, "2024-01-03"), ids.acme)
	p0104 := fmt.Sprintf(`{"id":"%s","assetId":"%s","date":"2024-01-04","open":102,"high":102.000001,"low":0.000001,"close":12345.678901,"volume":0}`, priceID(ids.acme, "2024-01-04"), ids.acme)
	nyse := fmt.Sprintf(`{"id":"%s","symbol":"NYSE","name":"New York Stock Exchange","timezone":"America/New_York","country":"US","currency":"USD","mic":"XNYS","openTime":"09:30","closeTime":"16:00"}`, nyseID)
	industry := func(id uuid.UUID, name, level string, parent *uuid.UUID, n int) string {
		p := "null"
		if parent != nil {
			p = `"` + parent.String() + `"`
		}
		return fmt.Sprintf(`{"id":"%s","name":"%s","level":"%s","parentId":%s,"assetCount":%d}`, id, name, level, p, n)
	}
	short := func(id uuid.UUID, sym, name, typ string) string { // industry asset lists: no exchangeId, no isActive
		return fmt.Sprintf(`{"id":"%s","symbol":"%s","name":"%s","type":"%s","currency":"USD"}`, id, sym, name, typ)
	}
	member := func(id uuid.UUID, sym, name string, active bool) string { // index lists: no exchangeId
		return fmt.Sprintf(`{"id":"%s","symbol":"%s","name":"%s","type":"stock","currency":"USD","isActive":%t}`, id, sym, name, active)
	}
	holiday := func(date, name string) string {
		return fmt.Sprintf(`{"id":"%s","exchangeId":"%s","date":"%s","name":"%s","type":"closed"}`,
			uuid.NewSHA1(uuid.MustParse(nyseID), []byte("holiday:"+date)), nyseID, date, name)
	}
	early := func(date, name string) string {
		return fmt.Sprintf(`{"id":"%s","exchangeId":"%s","date":"%s","name":"%s","type":"early_close","closeTime":"13:00"}`,
			uuid.NewSHA1(uuid.MustParse(nyseID), []byte("holiday:"+date)), nyseID, date, name)
	}
	// NYSE 2024 from the exchange's published holiday and early-close list
	// (nyse.com/markets/hours-calendars, 2024 column).
	nyse2024 := []string{
		holiday("2024-01-01", "New Year's Day"), holiday("2024-01-15", "Martin Luther King Jr. Day"),
		holiday("2024-02-19", "Washington's Birthday"), holiday("2024-03-29", "Good Friday"),
		holiday("2024-05-27", "Memorial Day"), holiday("2024-06-19", "Juneteenth National Independence Day"),
		holiday("2024-07-04", "Independence Day"), holiday("2024-09-02", "Labor Day"),
		holiday("2024-11-28", "Thanksgiving Day"), holiday("2024-12-25", "Christmas Day"),
	}
	nyseEarly2024 := []string{
		early("2024-07-03", "Day before Independence Day"), early("2024-11-29", "Day after Thanksgiving"), early("2024-12-24", "Christmas Eve"),
	}
	list := func(items ...string) string { return `{"data":[` + strings.Join(items, ",") + `]}` }
	one := func(item string) string { return `{"data":` + item + `}` }

	tests := []struct {
		name, path string
		status     int
		code       string // error code; "" for a success
		param      string // the parameter a 400 must name
		want       string // the whole body, when set
		check      func(t *testing.T, body map[string]any)
	}{
		// 4.1 assets
		{name: "assets", path: "/assets", status: 200, want: list(acmeJSON,
			fmt.Sprintf(`{"id":"%s","symbol":"BOLT","name":"Bolt Systems","type":"stock","exchangeId":"%s","currency":"USD","isActive":true}`, ids.bolt, nasdaqID),
			fmt.Sprintf(`{"id":"%s","symbol":"CORE","name":"Core Consulting","type":"stock","exchangeId":"%s","currency":"USD","isActive":false}`, ids.core, nasdaqID),
			fmt.Sprintf(`{"id":"%s","symbol":"ZETA-USD","name":"Zeta Coin","type":"crypto","exchangeId":"%s","currency":"USD","isActive":true}`, ids.zeta, cryptoID))},
		{name: "asset", path: "/assets/" + ids.acme.String(), status: 200, want: one(acmeJSON)},
		{name: "asset by symbol", path: "/assets/symbol/ACME", status: 200, want: one(acmeJSON)},
		{name: "asset by symbol ignores case", path: "/assets/symbol/aCmE", status: 200, want: one(acmeJSON)},
		{name: "asset unknown symbol", path: "/assets/symbol/NOPE", status: 404, code: "NOT_FOUND"},
		{name: "asset unknown id", path: "/assets/" + uuid.NewString(), status: 404, code: "NOT_FOUND"},
		{name: "asset malformed id", path: "/assets/123", status: 400, code: "VALIDATION_ERROR", param: "id"},
		{name: "profile", path: "/assets/" + ids.acme.String() + "/profile", status: 200, want: one(fmt.Sprintf(
			`{"assetId":"%s","description":"Makes widgets.","sector":"Technology","industry":"Application Software","marketCap":1234567890.5,"website":"https://acme.example","logoUrl":"https://acme.example/logo.png"}`, ids.acme))},
		{name: "profile missing", path: "/assets/" + ids.bolt.String() + "/profile", status: 404, code: "NOT_FOUND"},
		{name: "profile malformed id", path: "/assets/x/profile", status: 400, code: "VALIDATION_ERROR", param: "id"},
		{name: "fundamentals", path: "/assets/" + ids.acme.String() + "/fundamentals", status: 200, want: one(fmt.Sprintf(
			`{"assetId":"%s","peRatio":21.4,"eps":4.77,"revenue":9870000000,"marketCap":1234567890.5,"dividendYield":0.0125,"beta":1.08,"updatedAt":"2026-10-30T21:00:00.000Z"}`, ids.acme))},
		{name: "fundamentals unknown asset", path: "/assets/" + uuid.NewString() + "/fundamentals", status: 404, code: "NOT_FOUND"},
		{name: "fundamentals malformed id", path: "/assets/1-2-3/fundamentals", status: 400, code: "VALIDATION_ERROR", param: "id"},

		// 4.2 industries
		{name: "industries", path: "/industries", status: 200, want: list(
			industry(ids.energy, "Energy", "sector", nil, 0), industry(ids.tech, "Technology", "sector", nil, 3),
			industry(ids.software, "Software & Services", "industry_group", &ids.tech, 3),
			industry(ids.appSoftware, "Application Software", "industry", &ids.software, 2),
			industry(ids.consulting, "IT Consulting", "industry", &ids.software, 1))},
		{name: "industries by level", path: "/industries?level=industry_group", status: 200, want: list(
			industry(ids.software, "Software & Services", "industry_group", &ids.tech, 3))},
		{name: "industries bad level", path: "/industries?level=planet", status: 400, code: "VALIDATION_ERROR", param: "level"},
		{name: "industry", path: "/industries/" + ids.tech.String(), status: 200, want: one(industry(ids.tech, "Technology", "sector", nil, 3))},
		{name: "industry unknown", path: "/industries/" + uuid.NewString(), status: 404, code: "NOT_FOUND"},
		{name: "industry malformed", path: "/industries/tech", status: 400, code: "VALIDATION_ERROR", param: "id"},
		{name: "industry children", path: "/industries/" + ids.software.String() + "/children", status: 200, want: list(
			industry(ids.appSoftware, "Application Software", "industry", &ids.software, 2),
			industry(ids.consulting, "IT Consulting", "industry", &ids.software, 1))},
		{name: "industry children of a leaf", path: "/industries/" + ids.consulting.String() + "/children", status: 200, want: list()},
		{name: "industry children unknown", path: "/industries/" + uuid.NewString() + "/children", status: 404, code: "NOT_FOUND"},
		{name: "industry children malformed", path: "/industries/x/children", status: 400, code: "VALIDATION_ERROR", param: "id"},
		{name: "sector assets (all levels below)", path: "/industries/" + ids.tech.String() + "/assets", status: 200, want: list(
			short(ids.acme, "ACME", "Acme Widgets", "stock"), short(ids.bolt, "BOLT", "Bolt Systems", "stock"),
			short(ids.core, "CORE", "Core Consulting", "stock"))},
		{name: "industry assets", path: "/industries/" + ids.consulting.String() + "/assets", status: 200, want: list(
			short(ids.core, "CORE", "Core Consulting", "stock"))},
		{name: "industry assets empty", path: "/industries/" + ids.energy.String() + "/assets", status: 200, want: list()},
		{name: "industry assets unknown", path: "/industries/" + uuid.NewString() + "/assets", status: 404, code: "NOT_FOUND"},
		{name: "industry assets malformed", path: "/industries/x/assets", status: 400, code: "VALIDATION_ERROR", param: "id"},

		// 4.3 indexes
		{name: "indexes", path: "/indexes", status: 200, want: list(fmt.Sprintf(
			`{"id":"%s","symbol":"TKX3","name":"Tradekit Three","description":"Three test stocks","assetCount":2}`, ids.index))},
		{name: "index", path: "/indexes/" + ids.index.String(), status: 200, want: one(fmt.Sprintf(
			`{"id":"%s","symbol":"TKX3","name":"Tradekit Three","description":"Three test stocks","assetCount":2}`, ids.index))},
		{name: "index by symbol has no assetCount", path: "/indexes/symbol/tkx3", status: 200, want: one(fmt.Sprintf(
			`{"id":"%s","symbol":"TKX3","name":"Tradekit Three","description":"Three test stocks"}`, ids.index))},
		{name: "index unknown symbol", path: "/indexes/symbol/SPX", status: 404, code: "NOT_FOUND"},
		{name: "index unknown", path: "/indexes/" + uuid.NewString(), status: 404, code: "NOT_FOUND"},
		{name: "index malformed", path: "/indexes/abc", status: 400, code: "VALIDATION_ERROR", param: "id"},
		{name: "index assets today", path: "/indexes/" + ids.index.String() + "/assets", status: 200, want: list(
			member(ids.acme, "ACME", "Acme Widgets", true), member(ids.core, "CORE", "Core Consulting", false))},
		{name: "index assets as of 2021", path: "/indexes/" + ids.index.String() + "/assets?asOf=2021-06-01", status: 200, want: list(
			member(ids.acme, "ACME", "Acme Widgets", true), member(ids.bolt, "BOLT", "Bolt Systems", true))},
		{name: "index assets on the last day of a membership", path: "/indexes/" + ids.index.String() + "/assets?asOf=2022-01-02", status: 200, want: list(
			member(ids.acme, "ACME", "Acme Widgets", true), member(ids.bolt, "BOLT", "Bolt Systems", true))},
		{name: "index assets on the change date", path: "/indexes/" + ids.index.String() + "/assets?asOf=2022-01-03", status: 200, want: list(
			member(ids.acme, "ACME", "Acme Widgets", true), member(ids.core, "CORE", "Core Consulting", false))},
		{name: "index assets before the index", path: "/indexes/" + ids.index.String() + "/assets?asOf=2019-12-31", status: 200, want: list()},
		{name: "index assets bad asOf", path: "/indexes/" + ids.index.String() + "/assets?asOf=2021-13-01", status: 400, code: "VALIDATION_ERROR", param: "asOf"},
		{name: "index assets unknown", path: "/indexes/" + uuid.NewString() + "/assets", status: 404, code: "NOT_FOUND"},
		{name: "index assets malformed", path: "/indexes/x/assets", status: 400, code: "VALIDATION_ERROR", param: "id"},

		// 4.4 prices
		{name: "prices oldest first", path: "/prices/asset/" + ids.acme.String(), status: 200, want: list(p0102, p0103, p0104)},
		{name: "prices from", path: "/prices/asset/" + ids.acme.String() + "?from=2024-01-03", status: 200, want: list(p0103, p0104)},
		{name: "prices to (inclusive)", path: "/prices/asset/" + ids.acme.String() + "?to=2024-01-03", status: 200, want: list(p0102, p0103)},
		{name: "prices one day", path: "/prices/asset/" + ids.acme.String() + "?from=2024-01-03&to=2024-01-03", status: 200, want: list(p0103)},
		{name: "prices empty range", path: "/prices/asset/" + ids.acme.String() + "?from=2025-01-01", status: 200, want: list()},
		{name: "prices of an asset without prices", path: "/prices/asset/" + ids.bolt.String(), status: 200, want: list()},
		{name: "prices from after to", path: "/prices/asset/" + ids.acme.String() + "?from=2024-01-04&to=2024-01-03", status: 400, code: "VALIDATION_ERROR", param: "from"},
		{name: "prices bad from", path: "/prices/asset/" + ids.acme.String() + "?from=2024-1-3", status: 400, code: "VALIDATION_ERROR", param: "from"},
		{name: "prices bad to", path: "/prices/asset/" + ids.acme.String() + "?to=yesterday", status: 400, code: "VALIDATION_ERROR", param: "to"},
		{name: "prices unknown asset", path: "/prices/asset/" + uuid.NewString(), status: 404, code: "NOT_FOUND"},
		{name: "prices malformed asset", path: "/prices/asset/acme", status: 400, code: "VALIDATION_ERROR", param: "assetId"},
		{name: "latest", path: "/prices/asset/" + ids.acme.String() + "/latest", status: 200, want: one(p0104)},
		{name: "latest without prices", path: "/prices/asset/" + ids.bolt.String() + "/latest", status: 404, code: "NOT_FOUND"},
		{name: "latest unknown asset", path: "/prices/asset/" + uuid.NewString() + "/latest", status: 404, code: "NOT_FOUND"},
		{name: "latest malformed", path: "/prices/asset/x/latest", status: 400, code: "VALIDATION_ERROR", param: "assetId"},
		{name: "price", path: "/prices/" + priceID(ids.acme, "2024-01-03"), status: 200, want: one(p0103)},
		{name: "price unknown", path: "/prices/" + uuid.NewString(), status: 404, code: "NOT_FOUND"},
		{name: "price on a day without a record", path: "/prices/" + priceID(ids.acme, "2024-01-06"), status: 404, code: "NOT_FOUND"},
		{name: "price of an unknown asset", path: "/prices/" + priceID(uuid.New(), "2024-01-03"), status: 404, code: "NOT_FOUND"},
		{name: "price of another asset", path: "/prices/" + priceID(ids.bolt, "2024-01-03"), status: 404, code: "NOT_FOUND"},
		{name: "price malformed", path: "/prices/2024-01-03", status: 400, code: "VALIDATION_ERROR", param: "id"},

		// 4.5 exchanges
		{name: "exchanges", path: "/exchanges", status: 200, check: func(t *testing.T, body map[string]any) {
			got := map[string]bool{}
			for _, e := range body["data"].([]any) {
				got[e.(map[string]any)["symbol"].(string)] = true
			}
			for _, s := range []string{"NYSE", "NASDAQ", "LSE", "XETRA", "TSX", "ASX", "JPX", "HKEX", "CRYPTO"} {
				if !got[s] {
					t.Errorf("exchange %s missing", s)
				}
			}
		}},
		{name: "exchange", path: "/exchanges/" + nyseID, status: 200, want: one(nyse)},
		{name: "exchange by symbol", path: "/exchanges/symbol/nyse", status: 200, want: one(nyse)},
		{name: "exchange LSE", path: "/exchanges/symbol/LSE", status: 200, want: one(fmt.Sprintf(
			`{"id":"%s","symbol":"LSE","name":"London Stock Exchange","timezone":"Europe/London","country":"GB","currency":"GBP","mic":"XLON","openTime":"08:00","closeTime":"16:30"}`, lseID))},
		{name: "exchange unknown symbol", path: "/exchanges/symbol/MOON", status: 404, code: "NOT_FOUND"},
		{name: "exchange unknown", path: "/exchanges/" + uuid.NewString(), status: 404, code: "NOT_FOUND"},
		{name: "exchange malformed", path: "/exchanges/NYSE", status: 400, code: "VALIDATION_ERROR", param: "id"},
		{name: "holidays 2024", path: "/exchanges/" + nyseID + "/holidays?year=2024", status: 200, want: list(nyse2024...)},
		{name: "holidays 2024 early closes", path: "/exchanges/" + nyseID + "/holidays?year=2024&type=early_close", status: 200, want: list(nyseEarly2024...)},
		{name: "holidays 2024 all", path: "/exchanges/" + nyseID + "/holidays?year=2024&type=all", status: 200, check: func(t *testing.T, body map[string]any) {
			if n := len(body["data"].([]any)); n != len(nyse2024)+len(nyseEarly2024) {
				t.Errorf("%d holidays, want %d", n, len(nyse2024)+len(nyseEarly2024))
			}
		}},
		{name: "holidays default this year and next", path: "/exchanges/" + nyseID + "/holidays", status: 200, check: func(t *testing.T, body map[string]any) {
			items := body["data"].([]any)
			first, last := items[0].(map[string]any)["date"], items[len(items)-1].(map[string]any)["date"]
			// 2026-01-01 is a Thursday; 2027-12-25 a Saturday, observed Friday 2027-12-24.
			if first != "2026-01-01" || last != "2027-12-24" {
				t.Errorf("holidays run from %v to %v, want 2026-01-01 to 2027-12-24", first, last)
			}
			for _, it := range items {
				if it.(map[string]any)["type"] != "closed" {
					t.Errorf("default list holds %v", it)
				}
			}
		}},
		{name: "holidays year too early", path: "/exchanges/" + nyseID + "/holidays?year=1989", status: 400, code: "VALIDATION_ERROR", param: "year"},
		{name: "holidays year too late", path: "/exchanges/" + nyseID + "/holidays?year=2101", status: 400, code: "VALIDATION_ERROR", param: "year"},
		{name: "holidays year not a number", path: "/exchanges/" + nyseID + "/holidays?year=next", status: 400, code: "VALIDATION_ERROR", param: "year"},
		{name: "holidays bad type", path: "/exchanges/" + nyseID + "/holidays?type=half", status: 400, code: "VALIDATION_ERROR", param: "type"},
		{name: "holidays unknown exchange", path: "/exchanges/" + uuid.NewString() + "/holidays", status: 404, code: "NOT_FOUND"},
		{name: "holidays malformed", path: "/exchanges/x/holidays", status: 400, code: "VALIDATION_ERROR", param: "id"},
	}

	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Now: func() time.Time { return mdNow }}, db).Handler()
		key := mustKey(t, db, "md@example.com", "business")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := get(t, h, "/api/v1/market-data"+tt.path, key)
				if r.status != tt.status {
					t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
				}
				if tt.code != "" {
					if r.errorCode() != tt.code {
						t.Errorf("code %q, want %q: %s", r.errorCode(), tt.code, r.raw)
					}
					e := r.body["error"].(map[string]any)
					if msg, _ := e["message"].(string); tt.param != "" && !strings.Contains(msg, tt.param) {
						t.Errorf("message %q does not name %q", msg, tt.param)
					}
				}
				if tt.want != "" {
					var want map[string]any
					if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
						t.Fatalf("bad want: %v\n%s", err, tt.want)
					}
					if diff := cmp.Diff(want, r.body); diff != "" {
						t.Errorf("body (-want +got):\n%s", diff)
					}
				}
				if tt.check != nil {
					tt.check(t, r.body)
				}
			})
		}
		t.Run("unauthorized", func(t *testing.T) {
			r := get(t, h, "/api/v1/market-data/assets", "")
			if r.status != http.StatusUnauthorized {
				t.Errorf("status %d without a key", r.status)
			}
		})
		t.Run("exact decimals in JSON", func(t *testing.T) {
			r := get(t, h, "/api/v1/market-data/prices/"+priceID(ids.acme, "2024-01-04"), key)
			if !strings.Contains(r.raw, `"low":0.000001,`) || !strings.Contains(r.raw, `"close":12345.678901,`) {
				t.Errorf("decimals not written digit for digit: %s", r.raw)
			}
		})
	})
}

// TestPriceDecimalsInJSON stores prices of many shapes and checks that the
// list writes each exactly as decimal.Decimal.String does, up to 15
// significant digits, and rounded to them beyond (CONTRACT: every JSON
// number has at most 15).
func TestPriceDecimalsInJSON(t *testing.T) {
	t.Parallel()
	values := []string{"0.000000000000000001", "99999999999999999999.999999999999999999", "0.00001", "100", "120.5",
		"1000000", "123456789012345678", "1234567890123456789", "0.1", "7.000000000000000001", "42.4200", "1e3", "3.14159265358979"}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		a := marketdata.Asset{Symbol: "DEC", Name: "Decimals", Type: marketdata.Stock, ExchangeID: uuid.MustParse(nyseID), Currency: "USD"}
		if err := st.SaveAsset(ctx, &a); err != nil {
			t.Fatal(err)
		}
		var ps []marketdata.Price
		for i, v := range values {
			x := decimal.RequireFromString(v)
			ps = append(ps, marketdata.Price{AssetID: a.ID, Date: calendar.Date{Year: 2024, Month: 1, Day: 1}.AddDays(i),
				Open: x, High: x, Low: x, Close: x, Volume: int64(i)})
		}
		if err := st.SavePrices(ctx, ps); err != nil {
			t.Fatal(err)
		}
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		r := get(t, h, "/api/v1/market-data/prices/asset/"+a.ID.String(), mustKey(t, db, "dec@example.com", "business"))
		for _, v := range values {
			want := `"close":` + string(jsonnum.AppendNumber(nil, decimal.RequireFromString(v).String())) + `,`
			if !strings.Contains(r.raw, want) {
				t.Errorf("%s: no %s in %s", v, want, r.raw)
			}
		}
	})
}
