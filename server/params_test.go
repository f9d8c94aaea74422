package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestAmbiguousParams checks the cases of issue 25 that were accepted
// silently: a repeated parameter, an unknown one, an empty boolean, and a
// repeated key in a JSON parameter are each a 400 naming the parameter,
// and nothing is placed or changed.
func TestAmbiguousParams(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts, alice, conn := orderFixture(t, db)
		mustWalkAsset(t, db)
		order := []string{"connectionId", conn, "assetId", widgID.String(), "type", "market", "quantity", "1"}
		tests := []struct {
			name, method, path string
			field, msg         string
		}{
			{"repeated side", "POST", "/api/v1/brokers/orders?" + query(append(order, "side", "buy", "side", "sell")...),
				"side", "side: is given 2 times; give it once"},
			{"repeated quantity", "POST", "/api/v1/brokers/orders?" + query(append(order, "side", "buy", "quantity", "2")...),
				"quantity", "quantity: is given 2 times; give it once"},
			{"repeated maxDailyTrades", "PATCH", "/api/v1/brokers/guardrails?maxDailyTrades=5&maxDailyTrades=100000",
				"maxDailyTrades", "maxDailyTrades: is given 2 times; give it once"},
			{"unknown stopLossprice", "POST", "/api/v1/brokers/orders?" + query(append(order, "side", "buy", "stopLossprice", "900")...),
				"stopLossprice", "stopLossprice: unknown parameter; did you mean stopLossPrice? The parameters are connectionId, " +
					"assetId, side, type, quantity, limitPrice, stopLossPrice, clientOrderId, preview"},
			{"unknown on a route without parameters", "GET", "/api/v1/brokers/providers?verbose=1",
				"verbose", "verbose: unknown parameter; this route takes no query parameters"},
			{"empty preview", "POST", "/api/v1/brokers/orders?" + query(append(order, "side", "buy", "preview", "")...),
				"preview", "preview: is empty; give true or false"},
			{"preview without a value", "POST", "/api/v1/brokers/orders?" + query(append(order, "side", "buy")...) + "&preview",
				"preview", "preview: is empty; give true or false"},
			{"empty stopLossRequired", "PATCH", "/api/v1/brokers/guardrails?stopLossRequired=",
				"stopLossRequired", "stopLossRequired: is empty; give true or false"},
			{"repeated key in params", "GET", "/api/v1/indicators/asset/" + indAsset.String() + "?" +
				query("indicator", "SMA", "params", `{"period":5,"period":50}`),
				"params", `params: repeats the key "period": give each key once`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := ts.call(t, tt.method, tt.path, alice)
				wantInvalid(t, tt.name, r, tt.field)
				if r.errorMessage() != tt.msg {
					t.Errorf("message %q, want %q", r.errorMessage(), tt.msg)
				}
			})
		}
		if n := countRows(t, db, "broker_orders"); n != 0 {
			t.Errorf("%d orders placed", n)
		}
		// The repeated maxDailyTrades changed nothing: the defaults hold.
		g := ts.call(t, "GET", "/api/v1/brokers/guardrails", alice).object(t)
		if g["maxDailyTrades"] != 25.0 {
			t.Errorf("guardrails changed: %v", g)
		}
	})
}

// TestParamsCheckedBeforeLookups checks that a bad parameter is a 400
// even where a resource the request names does not exist: the parameters
// are checked before any lookup.
func TestParamsCheckedBeforeLookups(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts, alice, _ := orderFixture(t, db)
		mustWalkAsset(t, db)
		missing := uuid.NewString()
		order := []string{"connectionId", missing, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "1"}
		tests := []struct {
			name, method, path, field string
		}{
			{"repeated side, unknown connection", "POST", "/api/v1/brokers/orders?" + query(append(order, "side", "sell")...), "side"},
			{"limit price on a market order, unknown connection", "POST",
				"/api/v1/brokers/orders?" + query(append(order, "limitPrice", "10")...), "limitPrice"},
			{"bad type, unknown asset", "POST", "/api/v1/brokers/orders?" +
				query("connectionId", missing, "assetId", missing, "side", "buy", "type", "stop", "quantity", "1"), "type"},
			{"control out of range, unknown leader", "POST", "/api/v1/copy-trading/follow?" +
				query("leaderProfileId", missing, "allocationPct", "150"), "allocationPct"},
			{"bad formula, unknown indicator", "PATCH", "/api/v1/indicators/custom/" + missing + "?" + query("formula", "close +"), "formula"},
			{"bad date, unknown indicator", "POST", "/api/v1/indicators/custom/" + missing + "/evaluate?" +
				query("assetId", indAsset.String(), "from", "2024-13-01"), "from"},
			{"bad params, unknown asset", "GET", "/api/v1/indicators/asset/" + missing + "?" +
				query("indicator", "SMA", "params", `{"period":0}`), "params"},
			{"bad type, unknown exchange", "GET", "/api/v1/market-data/exchanges/" + missing + "/holidays?type=half", "type"},
			{"bad sortBy", "GET", "/api/v1/copy-trading/leaders?sortBy=luck", "sortBy"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantInvalid(t, tt.name, ts.call(t, tt.method, tt.path, alice), tt.field)
			})
		}
		// The same requests with good parameters do reach the lookup.
		if r := ts.call(t, "POST", "/api/v1/brokers/orders?"+query(order...), alice); r.status != http.StatusNotFound {
			t.Errorf("unknown connection: %d %s", r.status, r.raw)
		}
		if r := ts.call(t, "PATCH", "/api/v1/indicators/custom/"+missing+"?"+query("formula", "close"), alice); r.status != http.StatusNotFound {
			t.Errorf("unknown indicator: %d %s", r.status, r.raw)
		}
	})
}

// TestLongEchoCut checks the case of issue 25 that echoed 10,168
// characters, and that a value echoed from deep within a domain package
// (a formula's unknown name) is cut at 64 characters too.
func TestLongEchoCut(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	key := mustKey(t, db, "echo@example.com", "pro")
	long := strings.Repeat("x", 900)
	for _, c := range []struct{ method, path, field string }{
		{"POST", "/api/v1/copy-trading/follow?" + query("leaderProfileId", uuid.NewString(), "allocationPct", "1e10000"), "allocationPct"},
		{"POST", "/api/v1/indicators/custom?" + query("name", "n", "formula", long), "formula"},
		{"POST", "/api/v1/indicators/custom?" + query("name", "n", "formula", "sma(close, 5) + "+long), "formula"},
		{"POST", "/api/v1/backtests?" + query("entry", long, "exit", "close < 0"), "entry"},
		{"PATCH", "/api/v1/brokers/guardrails?" + query("allowedAssetTypes", long), "allowedAssetTypes"},
	} {
		r := send(t, h, c.method, c.path, key)
		wantInvalid(t, c.method+" "+c.path[:40], r, c.field)
		if msg := r.errorMessage(); len(msg) > 300 || strings.Contains(msg, strings.Repeat("x", 65)) ||
			strings.Contains(msg, "0000000000000000000000") {
			t.Errorf("%s %.60s…: a message of %d bytes: %.200s", c.method, c.path, len(msg), msg)
		}
	}
}

// plausible gives parameters values that pass the decoder, so that a
// request reaches the checks and lookups behind it.
var plausible = map[string]string{
	"formula": "close", "entry": "close > 0", "exit": "close < 0", "indicator": "SMA", "indicators": "RSI",
	"timeframes": "1d", "provider": "paper", "redirectUrl": "https://example.com/back", "slug": "some-slug",
	"displayName": "Some One", "strategyHash": "abc", "side": "buy", "type": "market", "level": "sector",
	"sortBy": "followers", "status": "pending", "name": "n",
}

// plausibleValue returns a value of the parameter p that the decoder
// accepts.
func plausibleValue(p server.RouteParam) string {
	switch v, ok := plausible[p.Name]; {
	case ok && (p.Enum == nil || slices.Contains(p.Enum, v)):
		return v
	case p.Enum != nil:
		return p.Enum[0]
	case p.Format == "uuid" || p.ItemType == "string" && strings.Contains(p.Name, "Ids"):
		return uuid.NewString()
	case p.Format == "date":
		return "2024-01-02"
	case p.Type == "boolean":
		return "true"
	case p.Type == "integer" || p.Type == "number":
		if p.Min != "" {
			return p.Min
		}
		return "1"
	}
	return "x"
}

// TestEveryEchoCut sends each parameter of every route a value of 900
// characters (and each number 1e10000), with plausible values for the
// others, and checks that no answer quotes more than 64 characters of it
// or prints the number in full, whichever package wrote the message.
func TestEveryEchoCut(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	mustMarketData(t, db)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	long := strings.Repeat("x", 900)
	n, sent := 0, 0
	for route, params := range server.RouteParams() {
		method, pattern, _ := strings.Cut(route, " ")
		key := mustKey(t, db, fmt.Sprintf("echo%d@example.com", n), "business")
		n++
		for i, target := range params {
			hostile := []string{long}
			if target.Type == "number" || target.Type == "integer" {
				hostile = append(hostile, "1e10000")
			}
			for _, bad := range hostile {
				path, q := pattern, url.Values{}
				for j, p := range params {
					v := plausibleValue(p)
					if i == j {
						v = bad
					}
					if p.In == "path" {
						path = strings.Replace(path, ":"+p.Name, url.PathEscape(v), 1)
					} else {
						q.Set(p.Name, v)
					}
				}
				if len(q) > 0 {
					path += "?" + q.Encode()
				}
				r := sendUnchecked(t, h, method, path, key)
				sent++
				if r.status < 400 {
					continue // stored, and shown as stored
				}
				if r.status >= 500 || strings.Contains(r.raw, strings.Repeat("x", 65)) || strings.Contains(r.raw, strings.Repeat("0", 30)) {
					t.Errorf("%s, %s=%.20s…: %d %.300s", route, target.Name, bad, r.status, r.raw)
				}
			}
		}
	}
	if sent < 150 {
		t.Errorf("%d requests sent; the route table has more parameters than that", sent)
	}
}
