package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/server"
)

// scrape returns the metric families h serves at GET /metrics.
func scrape(tb testing.TB, h http.Handler) map[string]*dto.MetricFamily {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		tb.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		tb.Fatalf("GET /metrics: %v", err)
	}
	return fams
}

// labels returns the labels of m by name.
func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// sample returns the value of the series of family name whose labels
// include want (a counter's or gauge's value, a histogram's count), and
// whether there is one.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		got := labels(m)
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// waitSample polls h's metrics until the series of name with labels want
// reaches at least min, or fails after 10 s.
func waitSample(t *testing.T, h http.Handler, name string, want map[string]string, min float64) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, func() error {
		if v, _ := sample(scrape(t, h), name, want); v < min {
			return fmt.Errorf("%s%v is %v", name, want, v)
		}
		return nil
	}, "%s%v to reach %v", name, want, min)
}

// uuidLike matches an id in a label value.
var uuidLike = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-`)

// TestMetricsAfterTraffic drives every kind of traffic the metrics count
// (API requests with ids in their paths, a 404, cached prices and
// indicators, orders accepted and refused by a guardrail, syncs, a copied
// fill, a spent rate limit) and checks that each family is exposed with
// the counts expected, and that routes are labelled by pattern only.
func TestMetricsAfterTraffic(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		ts := startOrders(t, db, nil)
		h := ts.MetricsHandler()
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		alicePF, aliceConn := mustPortfolio(t, ts, alice) // each syncs once
		_, bobConn := mustPortfolio(t, ts, bob)
		profile := ts.call(t, "POST", "/api/v1/copy-trading/publish?"+query("portfolioId", alicePF, "displayName", "Alice", "slug", "alice"), alice).object(t)
		ts.call(t, "POST", "/api/v1/copy-trading/follow?"+query("leaderProfileId", profile["id"].(string), "autoSync", "true",
			"allocationPct", "50", "maxPositionPct", "100"), bob).object(t)

		// An accepted order, filled and copied.
		o := ts.order(t, alice, "connectionId", aliceConn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "10").object(t)
		orderID := o["id"].(string)
		ts.waitOrder(t, alice, orderID, "filled")
		ts.waitList(t, bob, "/api/v1/brokers/orders", 1)
		// One refused by a guardrail.
		ts.patchGuardrails(t, bob, "allowedAssetTypes", "etf")
		if r := ts.order(t, bob, "connectionId", bobConn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "1"); r.status != 422 {
			t.Fatalf("the order breaking allowedAssetTypes: %d %s", r.status, r.raw)
		}
		// Prices and an indicator, twice each: a miss, then a hit.
		for range 2 {
			ts.call(t, "GET", "/api/v1/market-data/prices/asset/"+widgID.String(), alice).list(t)
			ts.call(t, "GET", "/api/v1/indicators/asset/"+widgID.String()+"?indicator=SMA&params=%7B%22period%22%3A2%7D", alice).list(t)
		}
		// A path no route has.
		if r := ts.call(t, "GET", "/api/v1/no-such/"+orderID, alice); r.status != 404 {
			t.Fatalf("unknown path: %d", r.status)
		}
		// A free plan's 30 requests a minute, and one more, on a stopped
		// clock: on a loaded machine, under the race detector, they took
		// long enough to straddle a minute, whose count starts anew.
		free := mustKey(t, db, "free@example.com", "free")
		ts.clock.Set(time.Now())
		for i := 0; i < 31; i++ {
			ts.call(t, "GET", "/api/v1/billing/plans", free)
		}
		ts.clock.Set(time.Time{})

		waitSample(t, h, "tradekit_copy_lag_seconds", nil, 1)
		fams := scrape(t, h)
		for _, c := range []struct {
			name   string
			labels map[string]string
			min    float64
		}{
			{"tradekit_http_requests_total", map[string]string{"route": "/api/v1/brokers/orders/:id", "method": "GET", "status": "200"}, 1},
			{"tradekit_http_requests_total", map[string]string{"route": "/api/v1/brokers/orders", "method": "POST", "status": "422"}, 1},
			{"tradekit_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "status": "404"}, 1},
			{"tradekit_http_requests_total", map[string]string{"route": "/paper/*"}, 1}, // the paper broker's API
			{"tradekit_http_request_duration_seconds", map[string]string{"route": "/api/v1/market-data/prices/asset/:assetId", "status": "200"}, 2},
			{"tradekit_http_requests_in_flight", nil, 0},
			{"tradekit_cache_requests_total", map[string]string{"cache": "prices", "result": "hit"}, 1},
			{"tradekit_cache_requests_total", map[string]string{"cache": "prices", "result": "miss"}, 1},
			{"tradekit_cache_requests_total", map[string]string{"cache": "indicators", "result": "hit"}, 1},
			{"tradekit_cache_requests_total", map[string]string{"cache": "indicators", "result": "miss"}, 1},
			{"tradekit_order_placement_duration_seconds", map[string]string{"outcome": "accepted"}, 2}, // alice's and the copy
			{"tradekit_order_placement_duration_seconds", map[string]string{"outcome": "rejected"}, 1},
			{"tradekit_guardrail_rejections_total", map[string]string{"rule": "allowedAssetTypes"}, 1},
			{"tradekit_guardrail_rejections_total", map[string]string{"rule": "maxDailyTrades"}, 0},
			{"tradekit_broker_syncs_total", map[string]string{"outcome": "completed"}, 2},
			{"tradekit_broker_sync_duration_seconds", nil, 2},
			{"tradekit_copy_lag_seconds", nil, 1},
			{"tradekit_rate_limit_rejections_total", map[string]string{"plan": "free"}, 1},
			// Alerts and webhooks: exposed from the start (package alerts
			// tests that its observer sees passes and attempts).
			{"tradekit_alert_evaluation_duration_seconds", nil, 0},
			{"tradekit_alert_firings_total", nil, 0},
			{"tradekit_webhook_delivery_duration_seconds", map[string]string{"outcome": "succeeded"}, 0},
			{"tradekit_webhook_delivery_duration_seconds", map[string]string{"outcome": "failed"}, 0},
			{"go_sql_max_open_connections", map[string]string{"db_name": "tradekit"}, 1},
			{"go_sql_in_use_connections", map[string]string{"db_name": "tradekit"}, 0},
			{"go_goroutines", nil, 1},
		} {
			v, ok := sample(fams, c.name, c.labels)
			if !ok || v < c.min {
				t.Errorf("%s%v = %v (exposed %v), want at least %v", c.name, c.labels, v, ok, c.min)
			}
		}
		if v, _ := sample(fams, "tradekit_rate_limit_rejections_total", map[string]string{"plan": "free"}); v != 1 {
			t.Errorf("rate-limit rejections of the free plan: %v, want 1", v)
		}
		if v, _ := sample(fams, "tradekit_guardrail_rejections_total", map[string]string{"rule": "allowedAssetTypes"}); v != 1 {
			t.Errorf("allowedAssetTypes rejections: %v, want 1", v)
		}
		// Bounded labels: patterns and fixed names, never an id.
		for _, name := range []string{"tradekit_http_requests_total", "tradekit_http_request_duration_seconds"} {
			for _, m := range fams[name].GetMetric() {
				route := labels(m)["route"]
				if uuidLike.MatchString(route) || !(strings.HasPrefix(route, "/") || route == "unmatched") {
					t.Errorf("%s has the route label %q", name, route)
				}
			}
		}
	})
}

// TestMetricsRouteLabelsBounded sends requests to many ids, known and
// unknown, and to many unknown paths: each route keeps one series.
func TestMetricsRouteLabelsBounded(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		s := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db)
		key := mustKey(t, db, "many@example.com", "pro")
		for i := range 20 {
			id := strconv.Itoa(i)
			sendUnchecked(t, s.Handler(), "GET", "/api/v1/market-data/assets/"+"00000000-0000-4000-8000-0000000000"+strconv.Itoa(10+i), key)
			sendUnchecked(t, s.Handler(), "GET", "/api/v1/nothing-here/"+id, key)
			sendUnchecked(t, s.Handler(), "BREW", "/api/v1/market-data/assets", key)
		}
		fams := scrape(t, s.MetricsHandler())
		series := map[string]bool{}
		for _, m := range fams["tradekit_http_requests_total"].GetMetric() {
			l := labels(m)
			series[l["route"]+" "+l["method"]+" "+l["status"]] = true
		}
		want := map[string]bool{
			"/api/v1/market-data/assets/:id GET 404": true,
			"unmatched GET 404":                      true,
			"unmatched OTHER 405":                    true,
		}
		if len(series) != len(want) {
			t.Errorf("series %v, want %v", series, want)
		}
		for k := range want {
			if !series[k] {
				t.Errorf("no series %q among %v", k, series)
			}
		}
	})
}

// TestMetricsEndpoint checks GET /metrics on the API's handler: served
// with no key when Config.Metrics is set, itself counted under a fixed
// route, and absent (404) otherwise.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		off := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		rec := httptest.NewRecorder()
		off.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != 404 {
			t.Errorf("GET /metrics without Config.Metrics: %d", rec.Code)
		}

		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Metrics: true}, db).Handler()
		get(t, h, "/healthz", "")
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Header().Get("Content-Type"))
		}
		if !strings.Contains(rec.Body.String(), `tradekit_http_requests_total{method="GET",route="/healthz",status="200"} 1`) {
			t.Errorf("GET /metrics lacks the /healthz request:\n%s", rec.Body)
		}
		fams := scrape(t, h)
		if v, _ := sample(fams, "tradekit_http_requests_total", map[string]string{"route": "/metrics", "status": "200"}); v < 1 {
			t.Errorf("the scrapes are not counted under route /metrics")
		}
	})
}
