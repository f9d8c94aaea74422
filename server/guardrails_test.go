package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

func TestGuardrails(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		const path = "/api/v1/brokers/guardrails"
		wantJSON := func(what, raw string, want string) {
			t.Helper()
			var got, w map[string]any
			json.Unmarshal([]byte(raw), &got)
			json.Unmarshal([]byte(want), &w)
			d := got["data"].(map[string]any)
			if at, _ := d["updatedAt"].(string); at != "" {
				if _, err := time.Parse(time.RFC3339, at); err != nil {
					t.Errorf("%s: updatedAt %q is no timestamp", what, at)
				}
				d["updatedAt"] = "set"
			}
			if diff := cmp.Diff(w, d); diff != "" {
				t.Errorf("%s (-want +got):\n%s", what, diff)
			}
		}
		defaults := `{"maxDailyTrades":25,"maxPositionSizePct":20,"maxPortfolioRiskPct":10,"stopLossRequired":false,
			"allowedAssetTypes":["stock","etf","fx","crypto","commodity"],"updatedAt":"set"}`
		first := get(t, h, path, alice)
		wantJSON("defaults", first.raw, defaults)
		// The defaults' time is when they were first read, and stays.
		if again := get(t, h, path, alice); again.object(t)["updatedAt"] != first.object(t)["updatedAt"] {
			t.Errorf("the defaults' updatedAt moved: %v, then %v", first.object(t)["updatedAt"], again.object(t)["updatedAt"])
		}

		r := send(t, h, "PATCH", path+"?maxDailyTrades=10&allowedAssetTypes[]=etf&allowedAssetTypes[]=stock", alice)
		wantJSON("first patch", r.raw, `{"maxDailyTrades":10,"maxPositionSizePct":20,"maxPortfolioRiskPct":10,"stopLossRequired":false,
			"allowedAssetTypes":["stock","etf"],"updatedAt":"set"}`)
		r = send(t, h, "PATCH", path+"?maxPositionSizePct=12.5&stopLossRequired=true&allowedAssetTypes=crypto,stock,crypto", alice)
		want := `{"maxDailyTrades":10,"maxPositionSizePct":12.5,"maxPortfolioRiskPct":10,"stopLossRequired":true,
			"allowedAssetTypes":["stock","crypto"],"updatedAt":"set"}`
		wantJSON("second patch", r.raw, want)
		wantJSON("read back", get(t, h, path, alice).raw, want)
		wantJSON("bob's are his own", get(t, h, path, bob).raw, defaults)

		for _, c := range []struct{ query, field string }{
			{"", "maxDailyTrades"},
			{"maxDailyTrades=0", "maxDailyTrades"},
			{"maxDailyTrades=", "maxDailyTrades"},
			{"stopLossRequired=", "stopLossRequired"},
			{"maxDailyTrades=2.5", "maxDailyTrades"},
			{"maxDailyTrades=100001", "maxDailyTrades"},
			{"maxPositionSizePct=0", "maxPositionSizePct"},
			{"maxPositionSizePct=100.01", "maxPositionSizePct"},
			{"maxPositionSizePct=abc", "maxPositionSizePct"},
			{"maxPortfolioRiskPct=-1", "maxPortfolioRiskPct"},
			{"maxPortfolioRiskPct=1.00001", "maxPortfolioRiskPct"},
			{"stopLossRequired=maybe", "stopLossRequired"},
			{"allowedAssetTypes=bonds", "allowedAssetTypes"},
			{"allowedAssetTypes=stock,%20etf", "allowedAssetTypes"},
			{"allowedAssetTypes=", "allowedAssetTypes"},
			{"allowedAssetTypes[]=", "allowedAssetTypes"},
		} {
			wantInvalid(t, "PATCH ?"+c.query, send(t, h, "PATCH", path+"?"+c.query, alice), c.field)
		}
		// A refused patch changes nothing, even its valid parts.
		send(t, h, "PATCH", path+"?maxDailyTrades=3&maxPositionSizePct=0", alice)
		wantJSON("after refused patches", get(t, h, path, alice).raw, want)
		if r := send(t, h, "PATCH", path+"?maxPortfolioRiskPct=100", alice); r.status != 200 {
			t.Errorf("100 percent: %d %s", r.status, r.raw)
		}
	})
}

// TestGuardrailsConcurrentPatches checks that two PATCHes of different
// fields sent at once both hold.
func TestGuardrailsConcurrentPatches(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "race@example.com", "business")
		for i := range 10 {
			n := 2 + i
			stop := i%2 == 0
			done := make(chan response, 2)
			go func() {
				done <- sendNoFatal(h, "PATCH", fmt.Sprintf("/api/v1/brokers/guardrails?maxDailyTrades=%d", n), key)
			}()
			go func() {
				done <- sendNoFatal(h, "PATCH", fmt.Sprintf("/api/v1/brokers/guardrails?stopLossRequired=%v", stop), key)
			}()
			for range 2 {
				if r := <-done; r.status != 200 {
					t.Fatalf("patch: %d %s", r.status, r.raw)
				}
			}
			g := get(t, h, "/api/v1/brokers/guardrails", key).object(t)
			if g["maxDailyTrades"] != float64(n) || g["stopLossRequired"] != stop {
				t.Fatalf("round %d: %v, want maxDailyTrades %d and stopLossRequired %v", i, g, n, stop)
			}
		}
	})
}

// sendNoFatal is send for other goroutines than the test's: it reports
// no failure itself.
func sendNoFatal(h http.Handler, method, path, key string) response {
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	json.Unmarshal(rec.Body.Bytes(), &r.body)
	return r
}
