package paper_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// call sends a request to the API at path (under /paper) with the access
// token, and returns the response and its body.
func (e *env) call(t *testing.T, method, token, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+"/paper"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, strings.TrimSpace(readBody(t, resp))
}

// TestEchoCut checks that no error of the API or of the account page
// echoes more than tradekit.MaxQuoted characters of what was sent: an
// order's symbol, a decimal field, an account configuration, and the
// key_id of a revocation each 60 KB long.
func TestEchoCut(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{AccessTTL: 72 * time.Hour})
		tok, _ := e.connect(t)
		long := strings.Repeat("X", 60<<10)
		order := func(field, value string) string {
			m := map[string]string{"symbol": "ACME", "qty": "1", "side": "buy", "type": "market", "time_in_force": "day"}
			m[field] = value
			b, _ := json.Marshal(m)
			return string(b)
		}
		for _, c := range []struct{ name, method, path, body string }{
			{"symbol", http.MethodPost, "/v2/orders", order("symbol", long[:50<<10])},
			{"qty", http.MethodPost, "/v2/orders", order("qty", long[:50<<10])},
			{"dtbp_check", http.MethodPatch, "/v2/account/configurations", `{"dtbp_check":"` + long[:50<<10] + `"}`},
		} {
			resp, body := e.call(t, c.method, tok.AccessToken, c.path, c.body)
			if resp.StatusCode != http.StatusUnprocessableEntity || len(body) > 300 || !strings.Contains(body, strings.Repeat("X", tradekit.MaxQuoted)) {
				t.Errorf("%s of 50 KB: %d, %d bytes, want 422 echoing %d characters:\n%.400s", c.name, resp.StatusCode, len(body), tradekit.MaxQuoted, body)
			}
		}

		_, link := e.signInLink(t, tok.AccessToken)
		br := e.signIn(t, link)
		_, page := br.get(e.srv.URL + "/paper/account")
		f := accountForms(t, page)["/paper/account/keys"] // its CSRF token
		f.Fields.Set("key_id", long)
		resp, page := br.post(e.srv.URL+"/paper/account/keys/revoke", f.Fields)
		if resp.StatusCode != http.StatusNotFound || strings.Contains(page, strings.Repeat("X", tradekit.MaxQuoted+1)) ||
			!strings.Contains(page, strings.Repeat("X", tradekit.MaxQuoted)) {
			t.Errorf("revoking a key_id of 60 KB: %d, %d bytes, want 404 echoing %d characters", resp.StatusCode, len(page), tradekit.MaxQuoted)
		}
	})
}

// TestNULRefused checks that a NUL in a string of a request is refused
// with 422 naming the field, never stored without it: in an order's
// client_order_id, symbol and take_profit, in a query parameter, from Go
// through Broker.Place, and in an API key's name.
func TestNULRefused(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100.5"})
		e := mustEnv(t, db, paper.Config{AccessTTL: 72 * time.Hour})
		tok, accountID := e.connect(t)
		base := `{"symbol":"ACME","qty":"1","side":"buy","type":"market","time_in_force":"day"`
		for _, c := range []struct{ name, body, param string }{
			{"client_order_id", base + `,"client_order_id":"a\u0000b"}`, "client_order_id"},
			{"symbol", `{"symbol":"AC\u0000ME","qty":"1","side":"buy","type":"market","time_in_force":"day"}`, "symbol"},
			{"order_class", base + `,"order_class":"simple\u0000"}`, "order_class"},
			{"legs", base + `,"legs":[{"symbol":"\u0000"}]}`, "legs.0.symbol"},
		} {
			resp, body := e.call(t, http.MethodPost, tok.AccessToken, "/v2/orders", c.body)
			want := `{"code":42210000,"message":"` + c.param + `: must not contain a NUL character"}`
			if resp.StatusCode != http.StatusUnprocessableEntity || body != want {
				t.Errorf("a NUL in %s: %d %s, want 422 %s", c.name, resp.StatusCode, body, want)
			}
		}
		if n := count(t, db, "paper_orders"); n != 0 {
			t.Errorf("%d orders stored, want none", n)
		}
		resp, body := e.call(t, http.MethodGet, tok.AccessToken, "/v2/orders:by_client_order_id?client_order_id=a%00b", "")
		if want := `{"code":42210000,"message":"client_order_id: must not contain a NUL character"}`; resp.StatusCode != http.StatusUnprocessableEntity || body != want {
			t.Errorf("a NUL in a query parameter: %d %s, want 422 %s", resp.StatusCode, body, want)
		}
		_, err := e.b.Place(context.Background(), uuid.MustParse(accountID), alpaca.OrderRequestJSON{Symbol: "ACME", Qty: dp("1"),
			Side: "buy", Type: "market", TimeInForce: "day", ClientOrderID: "a\x00b"})
		if tradekit.Message(err) != "client_order_id: must not contain a NUL character" {
			t.Errorf("Place with a NUL in client_order_id: %v", err)
		}
		if _, _, err := e.b.CreateAPIKey(context.Background(), uuid.MustParse(accountID), "a\x00b"); tradekit.Message(err) == "" {
			t.Errorf("CreateAPIKey with a NUL in its name: %v, want a ParamError", err)
		}
		// The same client_order_id without the NUL is free, and taken once.
		resp, body = e.call(t, http.MethodPost, tok.AccessToken, "/v2/orders", base+`,"client_order_id":"ab"}`)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the order with client_order_id ab: %d %s", resp.StatusCode, body)
		}
	})
}

// TestMaxOpenOrders checks that an account holds at most
// Config.MaxOpenOrders open orders (DefaultMaxOpenOrders, 1,000, by
// default; 20 here): the next answers 403 with Alpaca's code 40310000 and
// is not stored; cancelling one frees its place; a bracket counts its
// entry alone, its legs being held; and another account is not affected.
func TestMaxOpenOrders(t *testing.T) {
	t.Parallel()
	if got := paper.New(nil, paper.Config{}).MaxOpen(); got != 1000 || paper.DefaultMaxOpenOrders != 1000 {
		t.Errorf("the default cap of open orders: %d, want 1000", got)
	}
	const max = 20
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100.5"})
		e := mustEnv(t, db, paper.Config{AccessTTL: 72 * time.Hour, MaxOpenOrders: max})
		alice, aliceID := e.connect(t)
		bob, _ := e.connect(t)
		ctx := context.Background()
		rest := alpaca.OrderRequestJSON{Symbol: "ACME", Qty: dp("1"), Side: "buy", Type: "limit", LimitPrice: dp("1"), TimeInForce: "gtc"}
		var first alpaca.OrderJSON
		for i := range max {
			o, err := e.b.Place(ctx, uuid.MustParse(aliceID), rest)
			if err != nil {
				t.Fatalf("order %d: %v", i+1, err)
			}
			if i == 0 {
				first = o
			}
		}
		body := `{"symbol":"ACME","qty":"1","side":"buy","type":"limit","limit_price":"1","time_in_force":"gtc"}`
		resp, got := e.call(t, http.MethodPost, alice.AccessToken, "/v2/orders", body)
		want := `{"code":40310000,"message":"too many open orders: an account holds at most 20 (it holds 20)"}`
		if resp.StatusCode != http.StatusForbidden || got != want {
			t.Fatalf("order %d: %d %s, want 403 %s", max+1, resp.StatusCode, got, want)
		}
		if n := count(t, db, "paper_orders"); n != max {
			t.Errorf("%d orders stored, want %d", n, max)
		}
		if resp, got := e.call(t, http.MethodPost, bob.AccessToken, "/v2/orders", body); resp.StatusCode != http.StatusOK {
			t.Errorf("bob's order: %d %s", resp.StatusCode, got)
		}
		if err := e.b.Cancel(ctx, uuid.MustParse(aliceID), uuid.MustParse(first.ID)); err != nil {
			t.Fatal(err)
		}
		bracket := `{"symbol":"ACME","qty":"1","side":"buy","type":"limit","limit_price":"1","time_in_force":"gtc",` +
			`"order_class":"bracket","take_profit":{"limit_price":"200"},"stop_loss":{"stop_price":"0.5"}}`
		if resp, got := e.call(t, http.MethodPost, alice.AccessToken, "/v2/orders", bracket); resp.StatusCode != http.StatusOK {
			t.Errorf("a bracket order once one is cancelled: %d %s", resp.StatusCode, got)
		}
		if resp, _ := e.call(t, http.MethodPost, alice.AccessToken, "/v2/orders", body); resp.StatusCode != http.StatusForbidden {
			t.Errorf("the next order: %d, want 403", resp.StatusCode)
		}
	})
}
