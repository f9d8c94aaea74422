package server_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/indicators"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// walk is a seeded random walk of n weekday bars from 2022-01-03.
type walk struct {
	dates                          []calendar.Date
	open, high, low, close, volume []float64
	prices                         []marketdata.Price
}

func newWalk(assetID uuid.UUID, n int, seed uint64) walk {
	r := rand.New(rand.NewPCG(seed, 1))
	var w walk
	d := calendar.NewDate(2022, 1, 3)
	c := 100.0
	for len(w.dates) < n {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			o := c
			c = math.Round(c*math.Exp(0.02*r.NormFloat64())*100) / 100
			h := math.Round(math.Max(o, c)*(1+0.01*r.Float64())*100) / 100
			l := math.Round(math.Min(o, c)*(1-0.01*r.Float64())*100) / 100
			v := float64(1000 + r.IntN(100000))
			w.dates = append(w.dates, d)
			w.open, w.high, w.low, w.close, w.volume = append(w.open, o), append(w.high, h), append(w.low, l), append(w.close, c), append(w.volume, v)
			w.prices = append(w.prices, marketdata.Price{AssetID: assetID, Date: d,
				Open: decimal.NewFromFloat(o), High: decimal.NewFromFloat(h), Low: decimal.NewFromFloat(l),
				Close: decimal.NewFromFloat(c), Volume: int64(v)})
		}
		d = d.AddDays(1)
	}
	return w
}

var indAsset = uuid.MustParse("40000000-0000-4000-8000-000000000001")

// mustWalkAsset stores an asset with 600 bars of a random walk.
func mustWalkAsset(tb testing.TB, db bun.IDB) walk {
	tb.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	a := marketdata.Asset{ID: indAsset, Symbol: "WALK", Name: "Random Walk Inc", Type: marketdata.Stock,
		ExchangeID: uuid.MustParse(nyseID), Currency: "USD", IsActive: true}
	if err := st.SaveAsset(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	w := newWalk(indAsset, 600, 7)
	if err := st.SavePrices(ctx, w.prices); err != nil {
		tb.Fatal(err)
	}
	return w
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// seriesPath is the indicator series path of the walk asset.
func seriesPath(indicator, params, from, to string) string {
	q := url.Values{"indicator": {indicator}}
	if params != "" {
		q.Set("params", params)
	}
	if from != "" {
		q.Set("from", from)
	}
	if to != "" {
		q.Set("to", to)
	}
	return "/api/v1/indicators/asset/" + indAsset.String() + "?" + q.Encode()
}

func TestIndicatorSeries(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		w := mustWalkAsset(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "series@example.com", "business")

		macd, sig, hist := indicators.MACD(w.close, 12, 26, 9)
		up, mid, lo := indicators.BollingerBands(w.close, 10, 1.5)
		tests := []struct {
			indicator, params string
			want              map[string][]float64 // by field
		}{
			{"SMA", "", map[string][]float64{"value": indicators.SMA(w.close, 20)}},
			{"EMA", `{"period":9}`, map[string][]float64{"value": indicators.EMA(w.close, 9)}},
			{"RSI", `{"period":14}`, map[string][]float64{"value": indicators.RSI(w.close, 14)}},
			{"ATR", `{"period":5}`, map[string][]float64{"value": indicators.ATR(w.high, w.low, w.close, 5)}},
			{"MACD", `{}`, map[string][]float64{"value": macd, "signal": sig, "histogram": hist}},
			{"BB", `{"period":10,"stdDev":1.5}`, map[string][]float64{"value": mid, "upper": up, "middle": mid, "lower": lo}},
		}
		for _, tt := range tests {
			t.Run(tt.indicator, func(t *testing.T) {
				full := send(t, h, "GET", seriesPath(tt.indicator, tt.params, "", ""), key).list(t)
				defined := 0
				for _, v := range tt.want["value"] {
					if !math.IsNaN(v) {
						defined++
					}
				}
				if len(full) != defined {
					t.Fatalf("%d points, want the %d defined dates", len(full), defined)
				}
				for k, p := range full { // newest first
					i := len(w.dates) - 1 - k
					if p["date"] != w.dates[i].String() {
						t.Fatalf("point %d dated %v, want %s", k, p["date"], w.dates[i])
					}
					for field, want := range tt.want {
						if got, ok := p[field].(float64); !ok || !near(got, want[i]) {
							t.Fatalf("%s at %s = %v, want %v", field, p["date"], p[field], want[i])
						}
					}
				}

				// A window equals the same dates of the full series: the
				// warm-up comes from the history before from.
				from, to := w.dates[100].String(), w.dates[180].String()
				win := send(t, h, "GET", seriesPath(tt.indicator, tt.params, from, to), key).list(t)
				if len(win) != 81 {
					t.Fatalf("window %s..%s has %d points, want 81", from, to, len(win))
				}
				offset := len(w.dates) - 1 - 180
				for k, p := range win {
					for field, v := range full[offset+k] {
						if p[field] != v {
							t.Fatalf("window point %v: %s = %v, full series says %v", p["date"], field, p[field], v)
						}
					}
				}
			})
		}
	})
}

func TestIndicatorSeriesErrors(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustWalkAsset(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "errors@example.com", "business")
		base := "/api/v1/indicators/asset/" + indAsset.String()
		tests := []struct {
			path, code, field string
		}{
			{base, "VALIDATION_ERROR", "indicator"},
			{base + "?indicator=VWMA", "VALIDATION_ERROR", "indicator"},
			{seriesPath("SMA", "[20]", "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("SMA", "period=20", "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("SMA", `{"length":20}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("SMA", `{"period":0}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("SMA", `{"period":1001}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("SMA", `{"period":2.5}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("SMA", `{"period":"20"}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("RSI", `{"period":1}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("BB", `{"stdDev":-1}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("MACD", `{"period":9}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("MACD", `{"fastPeriod":26}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("MACD", `{"fastPeriod":30,"slowPeriod":12}`, "", ""), "VALIDATION_ERROR", "params"},
			{seriesPath("SMA", "", "2024-13-01", ""), "VALIDATION_ERROR", "from"},
			{seriesPath("SMA", "", "", "yesterday"), "VALIDATION_ERROR", "to"},
			{seriesPath("SMA", "", "2024-05-01", "2024-04-01"), "VALIDATION_ERROR", "from"},
			{"/api/v1/indicators/asset/not-a-uuid?indicator=SMA", "VALIDATION_ERROR", "assetId"},
			{"/api/v1/indicators/asset/" + uuid.NewString() + "?indicator=SMA", "NOT_FOUND", ""},
		}
		for _, tt := range tests {
			r := send(t, h, "GET", tt.path, key)
			if r.errorCode() != tt.code || !strings.Contains(r.raw, tt.field) {
				t.Errorf("%s: %d %s, want %s naming %q", tt.path, r.status, r.raw, tt.code, tt.field)
			}
			if tt.field != "" && !strings.Contains(r.raw, `"fields":["`+tt.field+`"]`) {
				t.Errorf("%s: details do not name %s: %s", tt.path, tt.field, r.raw)
			}
		}
	})
}

func TestIndicatorSummaryAndOverlays(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		w := mustWalkAsset(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "summary@example.com", "business")
		last := len(w.close) - 1
		lastOf := func(x []float64) float64 { return x[len(x)-1] }

		sum := send(t, h, "GET", "/api/v1/indicators/asset/"+indAsset.String()+"/summary", key).object(t)
		if sum["assetId"] != indAsset.String() || sum["updatedAt"] == nil {
			t.Errorf("summary: %v", sum)
		}
		ind := sum["indicators"].(map[string]any)
		macd, sig, hist := indicators.MACD(w.close, 12, 26, 9)
		up, mid, lo := indicators.BollingerBands(w.close, 20, 2)
		wantScalar := map[string]float64{
			"SMA_20": indicators.SMA(w.close, 20)[last], "SMA_50": indicators.SMA(w.close, 50)[last],
			"SMA_200": indicators.SMA(w.close, 200)[last], "RSI_14": indicators.RSI(w.close, 14)[last],
		}
		for k, want := range wantScalar {
			if got, ok := ind[k].(float64); !ok || !near(got, want) {
				t.Errorf("summary %s = %v, want %v", k, ind[k], want)
			}
		}
		checkObj := func(what string, got any, want map[string]float64) {
			t.Helper()
			m, ok := got.(map[string]any)
			if !ok || len(m) != len(want) {
				t.Errorf("%s = %v, want %v", what, got, want)
				return
			}
			for k, v := range want {
				if g, ok := m[k].(float64); !ok || !near(g, v) {
					t.Errorf("%s.%s = %v, want %v", what, k, m[k], v)
				}
			}
		}
		checkObj("summary MACD", ind["MACD"], map[string]float64{"value": macd[last], "signal": sig[last], "histogram": hist[last]})
		checkObj("summary BB_20", ind["BB_20"], map[string]float64{"upper": up[last], "middle": mid[last], "lower": lo[last]})

		// Weekly and monthly closes worked out independently here: the last
		// close of each ISO week and of each month.
		var wclose, mclose []float64
		for i, d := range w.dates {
			y, wk := d.Time(time.UTC).ISOWeek()
			if i == 0 || func() bool { py, pw := w.dates[i-1].Time(time.UTC).ISOWeek(); return py != y || pw != wk }() {
				wclose = append(wclose, 0)
			}
			wclose[len(wclose)-1] = w.close[i]
			if i == 0 || d.Month != w.dates[i-1].Month {
				mclose = append(mclose, 0)
			}
			mclose[len(mclose)-1] = w.close[i]
		}

		path := "/api/v1/indicators/asset/" + indAsset.String() + "/multi-timeframe?indicators=RSI,MACD,SMA_50&timeframes=1d,1w,1M"
		ov := send(t, h, "GET", path, key).object(t)
		o := ov["overlays"].(map[string]any)
		rsi := o["RSI_14"].(map[string]any)
		for tf, want := range map[string]float64{
			"1d": lastOf(indicators.RSI(w.close, 14)), "1w": lastOf(indicators.RSI(wclose, 14)), "1M": lastOf(indicators.RSI(mclose, 14)),
		} {
			if got, ok := rsi[tf].(float64); !ok || !near(got, want) {
				t.Errorf("RSI_14 %s = %v, want %v", tf, rsi[tf], want)
			}
		}
		wm, ws, wh := indicators.MACD(wclose, 12, 26, 9)
		checkObj("MACD 1w", o["MACD"].(map[string]any)["1w"], map[string]float64{"value": lastOf(wm), "signal": lastOf(ws), "histogram": lastOf(wh)})
		if got := o["SMA_50"].(map[string]any)["1M"]; got != nil { // 28 months < 50
			t.Errorf("SMA_50 on 28 monthly bars = %v, want null", got)
		}

		for _, p := range []string{
			"/multi-timeframe?timeframes=1d", "/multi-timeframe?indicators=RSI",
			"/multi-timeframe?indicators=RSI&timeframes=1h", "/multi-timeframe?indicators=KAMA&timeframes=1d",
			"/multi-timeframe?indicators=RSI_1&timeframes=1d",
		} {
			if r := send(t, h, "GET", "/api/v1/indicators/asset/"+indAsset.String()+p, key); r.errorCode() != "VALIDATION_ERROR" {
				t.Errorf("%s: %d %s", p, r.status, r.raw)
			}
		}
	})
}

// TestIndicatorCacheInvalidation changes a price after a series was
// served (and cached): the next request sees the change. With the server's
// background work running, PostgreSQL tells it of the change instead of
// each request asking, and the change shows within milliseconds.
func TestIndicatorCacheInvalidation(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		db := dbtest.MustOpen(t, dsn)
		w := mustWalkAsset(t, db)
		key := mustKey(t, db, "cache@example.com", "business")
		path := seriesPath("SMA", `{"period":3}`, "", "")
		for _, watch := range []bool{false, true} {
			srv := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db)
			h := srv.Handler()
			if watch {
				ctx, cancel := context.WithCancel(context.Background())
				go srv.Maintain(ctx)
				defer cancel()
				if strings.HasPrefix(dsn, "postgres") {
					testkit.Eventually(t, 5*time.Second, srv.Studies().Watching, "listening for price changes")
				}
			}
			before := send(t, h, "GET", path, key).list(t)
			send(t, h, "GET", path, key) // from the cache

			// Another instance writes the prices.
			w.prices[len(w.prices)-1].Close = w.prices[len(w.prices)-1].Close.Add(decimal.NewFromInt(30))
			err := marketdata.NewStore(dbtest.MustOpen(t, dsn)).SavePrices(context.Background(), w.prices[len(w.prices)-1:])
			if err != nil {
				t.Fatal(err)
			}
			// Unwatched, the change must be served at once; watched, the
			// notification may take a moment.
			timeout := 5 * time.Second
			if !watch {
				timeout = 0
			}
			start := time.Now()
			testkit.Eventually(t, timeout, func() error {
				after := send(t, h, "GET", path, key).list(t)
				if got, want := after[0]["value"].(float64)-before[0]["value"].(float64), 10.0; !near(got, want) {
					return fmt.Errorf("SMA(3) moved by %v after the last close rose by 30, want %v", got, want)
				}
				return nil
			}, "watching %v: the change to be served", watch)
			t.Logf("watching %v: change served after %v", watch, time.Since(start))
		}
	})
}

func TestCustomIndicators(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		w := mustWalkAsset(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		q := func(kv ...string) string {
			v := url.Values{}
			for i := 0; i < len(kv); i += 2 {
				v.Set(kv[i], kv[i+1])
			}
			return v.Encode()
		}

		created := send(t, h, "POST", "/api/v1/indicators/custom?"+q("name", "Spread", "formula", "close - sma(close, 3)", "description", "distance from the mean"), alice).object(t)
		checkKeys(t, "created", created, []string{"id", "name", "formula", "description", "createdAt"}, nil)
		id := created["id"].(string)

		list := send(t, h, "GET", "/api/v1/indicators/custom", alice).list(t)
		if len(list) != 1 || list[0]["id"] != id || list[0]["formula"] != "close - sma(close, 3)" {
			t.Errorf("alice's list: %v", list)
		}
		if got := send(t, h, "GET", "/api/v1/indicators/custom", bob).list(t); len(got) != 0 {
			t.Errorf("bob sees %v", got)
		}

		// Evaluate: close - SMA(3) at each date, newest first.
		ev := send(t, h, "POST", "/api/v1/indicators/custom/"+id+"/evaluate?"+q("assetId", indAsset.String(), "from", w.dates[10].String(), "to", w.dates[19].String()), alice).object(t)
		if ev["indicatorId"] != id || ev["assetId"] != indAsset.String() {
			t.Errorf("evaluate: %v", ev)
		}
		vals := ev["values"].([]any)
		sma := indicators.SMA(w.close, 3)
		if len(vals) != 10 {
			t.Fatalf("%d values, want 10", len(vals))
		}
		for k, v := range vals {
			i := 19 - k
			p := v.(map[string]any)
			if p["date"] != w.dates[i].String() || !near(p["value"].(float64), w.close[i]-sma[i]) {
				t.Errorf("value %d: %v, want %s %v", k, p, w.dates[i], w.close[i]-sma[i])
			}
		}

		// Patch changes only what is given.
		up := send(t, h, "PATCH", "/api/v1/indicators/custom/"+id+"?"+q("name", "Spread 2"), alice).object(t)
		checkKeys(t, "patched", up, []string{"id", "name", "formula", "updatedAt"}, []string{"createdAt"})
		if up["name"] != "Spread 2" || up["formula"] != "close - sma(close, 3)" {
			t.Errorf("patch name: %v", up)
		}
		if r := send(t, h, "PATCH", "/api/v1/indicators/custom/"+id+"?"+q("formula", "sma(close)"), alice); r.errorCode() != "VALIDATION_ERROR" ||
			!strings.Contains(r.raw, "1:1: sma expects 2 arguments, got 1") {
			t.Errorf("patch to a bad formula: %d %s", r.status, r.raw)
		}

		// Bob cannot reach it.
		for _, c := range []struct{ method, path string }{
			{"PATCH", "/api/v1/indicators/custom/" + id + "?name=x"},
			{"DELETE", "/api/v1/indicators/custom/" + id},
			{"POST", "/api/v1/indicators/custom/" + id + "/evaluate?assetId=" + indAsset.String()},
		} {
			if r := send(t, h, c.method, c.path, bob); r.errorCode() != "NOT_FOUND" {
				t.Errorf("bob %s %s: %d %s", c.method, c.path, r.status, r.raw)
			}
		}

		del := send(t, h, "DELETE", "/api/v1/indicators/custom/"+id, alice).object(t)
		if del["id"] != id || del["status"] != "deleted" {
			t.Errorf("delete: %v", del)
		}
		for _, c := range []struct{ method, path string }{
			{"DELETE", "/api/v1/indicators/custom/" + id},
			{"PATCH", "/api/v1/indicators/custom/" + id + "?name=x"},
			{"POST", "/api/v1/indicators/custom/" + id + "/evaluate?assetId=" + indAsset.String()},
		} {
			if r := send(t, h, c.method, c.path, alice); r.errorCode() != "NOT_FOUND" {
				t.Errorf("after delete %s: %d %s", c.method, r.status, r.raw)
			}
		}

		for _, c := range []struct{ query, field string }{
			{q("formula", "close"), "name"},
			{q("name", "x"), "formula"},
			{q("name", "x", "formula", "close +"), "formula"},
			{q("name", "x", "formula", "sma(close, 0)"), "formula"},
			{q("name", "x", "formula", strings.Repeat("close+", 200)+"close"), "formula"},
			{q("name", strings.Repeat("n", 101), "formula", "close"), "name"},
		} {
			if r := send(t, h, "POST", "/api/v1/indicators/custom?"+c.query, alice); r.errorCode() != "VALIDATION_ERROR" ||
				!strings.Contains(r.raw, `"fields":["`+c.field+`"]`) {
				t.Errorf("create %s: %d %s, want 400 naming %s", c.query, r.status, r.raw, c.field)
			}
		}
		if r := send(t, h, "POST", "/api/v1/indicators/custom/"+uuid.NewString()+"/evaluate", alice); r.errorCode() != "VALIDATION_ERROR" {
			t.Errorf("evaluate without assetId: %d %s", r.status, r.raw)
		}

		// At most 100 per user.
		for i := 0; i < 100; i++ {
			if r := send(t, h, "POST", "/api/v1/indicators/custom?"+q("name", fmt.Sprint("n", i), "formula", "close"), bob); r.status != 200 {
				t.Fatalf("bob's indicator %d: %d %s", i+1, r.status, r.raw)
			}
		}
		if r := send(t, h, "POST", "/api/v1/indicators/custom?"+q("name", "one too many", "formula", "close"), bob); r.errorCode() != "CONFLICT" {
			t.Errorf("bob's 101st indicator: %d %s", r.status, r.raw)
		}
	})
}

// TestCustomIndicatorNamesUnique checks that one user's custom indicators
// have distinct names, another user's and deleted ones aside.
func TestCustomIndicatorNamesUnique(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		create := func(key, name string) response {
			return send(t, h, "POST", "/api/v1/indicators/custom?"+query("name", name, "formula", "close"), key)
		}
		first := create(alice, "Trend").object(t)["id"].(string)
		if r := create(alice, "Trend"); r.status != 409 || r.errorCode() != "CONFLICT" || !strings.Contains(r.errorMessage(), `named "Trend"`) {
			t.Errorf("a second Trend: %d %s, want 409", r.status, r.raw)
		}
		if r := create(bob, "Trend"); r.status != 200 {
			t.Errorf("bob's Trend: %d %s", r.status, r.raw)
		}
		other := create(alice, "Other").object(t)["id"].(string)
		if r := send(t, h, "PATCH", "/api/v1/indicators/custom/"+other+"?name=Trend", alice); r.status != 409 {
			t.Errorf("renaming Other to Trend: %d %s, want 409", r.status, r.raw)
		}
		if r := send(t, h, "PATCH", "/api/v1/indicators/custom/"+first+"?name=Trend&formula=open", alice); r.status != 200 {
			t.Errorf("keeping Trend's own name: %d %s", r.status, r.raw)
		}
		if r := send(t, h, "DELETE", "/api/v1/indicators/custom/"+first, alice); r.status != 200 {
			t.Fatalf("delete: %d %s", r.status, r.raw)
		}
		if r := create(alice, "Trend"); r.status != 200 {
			t.Errorf("Trend again after deleting the first: %d %s", r.status, r.raw)
		}
	})
}
