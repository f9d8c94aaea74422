package paper_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// trader connects a new paper account and returns a client of it, as
// Tradekit reaches the broker, and the account's id.
func (e *env) trader(t *testing.T) (*alpaca.Client, string) {
	t.Helper()
	tok, id := e.connect(t)
	e.lastToken = tok.AccessToken
	return alpaca.New(alpaca.Config{BaseURL: e.srv.URL + "/paper", Token: &oauth2.Token{AccessToken: tok.AccessToken},
		HTTPClient: e.srv.Client()}), id
}

// match runs one pass of the matcher and fails on error.
func match(t *testing.T, b *paper.Broker) int {
	t.Helper()
	n, err := b.Match(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMatchReadsEveryOpenOrder checks that a pass of the matcher reads
// every open order, however many, a batch after another: with batches of
// 2, a close that crosses 7 resting limits fills all 7 (the oldest 2
// alone when a pass read one batch). Not parallel: it sets the package's
// batch.
func TestMatchReadsEveryOpenOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100.5", "2026-03-02": "101.25"})
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
		c, _ := e.trader(t)
		ctx := context.Background()
		lim := d("90")
		var ids []string
		for i := range 7 {
			st, err := c.PlaceOrder(ctx, brokers.OrderRequest{ClientOrderID: fmt.Sprintf("rest-%d", i), Symbol: "ACME",
				Side: brokers.Buy, Type: brokers.Limit, Quantity: d("1"), LimitPrice: &lim})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, st.ID)
		}
		defer paper.SetMatchBatch(2)()
		if n := match(t, e.b); n != 0 {
			t.Fatalf("limits below the close: %d filled", n)
		}
		mustClose(t, db, "ACME", "2026-03-03", "89")
		e.clock.Set(t0.Add(24 * time.Hour))
		if n := match(t, e.b); n != len(ids) {
			t.Errorf("Match filled %d of the %d limits the close crossed", n, len(ids))
		}
		for _, id := range ids {
			if st, err := c.Order(ctx, id); err != nil || st.Status != brokers.Filled {
				t.Errorf("order %s: %s, %v; want filled", id, st.Status, err)
			}
		}
	})
}

// TestPlaceAndMatch places orders through Alpaca's client and checks each
// fill to the last decimal: market orders at the close with 10 bps of
// slippage and a commission of 0.5, limit orders when the close crosses,
// and the refusals of buying power, quantity and a taken client order id.
func TestPlaceAndMatch(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100.5", "2026-03-02": "101.25"})
		e := mustEnv(t, db, paper.Config{SlippageBps: d("10"), Commission: d("0.5")}, portal.Config{AccessTTL: 72 * time.Hour})
		c, _ := e.trader(t)
		tok := e.lastToken
		ctx := context.Background()
		place := func(o brokers.OrderRequest) brokers.OrderState {
			t.Helper()
			st, err := c.PlaceOrder(ctx, o)
			if err != nil {
				t.Fatalf("PlaceOrder(%+v): %v", o, err)
			}
			return st
		}
		cash := func() decimal.Decimal {
			a, err := c.Account(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return a.Cash
		}

		// A market buy: open until the matcher passes, then filled at
		// 101.25 × 1.001 = 101.35125 with the commission charged.
		buy := place(brokers.OrderRequest{ClientOrderID: "m-1", Symbol: "acme", Side: brokers.Buy, Type: brokers.Market, Quantity: d("3")})
		if buy.Status != brokers.Pending || buy.BrokerStatus != "new" || buy.ClientOrderID != "m-1" {
			t.Fatalf("placed: %+v", buy)
		}
		if n := match(t, e.b); n != 1 {
			t.Fatalf("Match filled %d orders, want 1", n)
		}
		st, err := c.Order(ctx, buy.ID)
		if err != nil || st.Status != brokers.Filled || st.FilledPrice.String() != "101.35125" || !st.FilledQuantity.Equal(d("3")) ||
			!st.Commission.Equal(d("0.5")) || st.FilledAt == nil || !st.FilledAt.Equal(t0) {
			t.Fatalf("filled: %+v, %v", st, err)
		}
		if got := cash(); !got.Equal(d("99695.44625")) { // 100000 − 3 × 101.35125 − 0.5
			t.Errorf("cash %s after the buy", got)
		}
		if n := match(t, e.b); n != 0 {
			t.Errorf("a second pass filled %d orders", n)
		}

		// A limit buy below the close rests, then fills when a lower close
		// is stored, at that close with slippage: 89 × 1.001 = 89.089.
		lim := d("90")
		rest := place(brokers.OrderRequest{ClientOrderID: "l-1", Symbol: "ACME", Side: brokers.Buy, Type: brokers.Limit, Quantity: d("3"), LimitPrice: &lim})
		if n := match(t, e.b); n != 0 {
			t.Fatalf("a limit below the close filled")
		}
		mustClose(t, db, "ACME", "2026-03-03", "89")
		e.clock.Set(t0.Add(24 * time.Hour))
		match(t, e.b)
		if st, _ := c.Order(ctx, rest.ID); st.Status != brokers.Filled || st.FilledPrice.String() != "89.089" {
			t.Errorf("the limit after the close crossed: %+v", st)
		}
		// A limit whose slipped price is worse than the limit fills at the limit.
		lim2 := d("89.05")
		capped := place(brokers.OrderRequest{Symbol: "ACME", Side: brokers.Buy, Type: brokers.Limit, Quantity: d("1"), LimitPrice: &lim2})
		match(t, e.b)
		if st, _ := c.Order(ctx, capped.ID); st.Status != brokers.Filled || st.FilledPrice.String() != "89.05" {
			t.Errorf("the capped limit: %+v", st)
		}

		// Refusals: selling more than held beside an open sell, buying
		// more than the cash.
		high := d("200")
		open := place(brokers.OrderRequest{ClientOrderID: "s-1", Symbol: "ACME", Side: brokers.Sell, Type: brokers.Limit, Quantity: d("3"), LimitPrice: &high})
		_, err = c.PlaceOrder(ctx, brokers.OrderRequest{Symbol: "ACME", Side: brokers.Sell, Type: brokers.Market, Quantity: d("4.5")})
		var re *brokers.RefusedError
		if !errors.As(err, &re) || re.Reason != "insufficient qty available for order (requested: 4.5, available: 4)" || re.Code != 40310000 {
			t.Errorf("selling 4.5 of 7 with 3 offered: %v", err)
		}
		_, err = c.PlaceOrder(ctx, brokers.OrderRequest{Symbol: "ACME", Side: brokers.Buy, Type: brokers.Market, Quantity: d("1200")})
		if !errors.As(err, &re) || re.Reason != "insufficient buying power" {
			t.Errorf("buying 1200 × 89: %v", err)
		}
		for _, o := range []brokers.OrderRequest{
			{Symbol: "NOPE", Side: brokers.Buy, Type: brokers.Market, Quantity: d("1")},
			{Symbol: "ACME", Side: brokers.Buy, Type: "stop", Quantity: d("1")}, // no stop price
			{Symbol: "ACME", Side: brokers.Buy, Type: "trailing_stop", Quantity: d("1")},
			{Symbol: "ACME", Side: brokers.Buy, Type: brokers.Market, Quantity: d("0.0000000001")},
		} {
			if _, err := c.PlaceOrder(ctx, o); !errors.As(err, &re) || !strings.Contains(re.Reason, "must") && !strings.Contains(re.Reason, "not traded") &&
				!strings.Contains(re.Reason, "required") && !strings.Contains(re.Reason, "not simulated") {
				t.Errorf("PlaceOrder(%+v): %v, want a refusal", o, err)
			}
		}

		// A taken client order id: the same order comes back, another
		// order is a conflict.
		again, err := c.PlaceOrder(ctx, brokers.OrderRequest{ClientOrderID: "s-1", Symbol: "ACME", Side: brokers.Sell, Type: brokers.Limit, Quantity: d("3"), LimitPrice: &high})
		if err != nil || again.ID != open.ID {
			t.Errorf("resending s-1: %+v, %v", again, err)
		}
		if _, err := c.PlaceOrder(ctx, brokers.OrderRequest{ClientOrderID: "s-1", Symbol: "ACME", Side: brokers.Sell, Type: brokers.Market, Quantity: d("1")}); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("s-1 for another order: %v", err)
		}
		if st, err := c.OrderByClientID(ctx, "s-1"); err != nil || st.ID != open.ID {
			t.Errorf("by client order id: %+v, %v", st, err)
		}

		// Cancelling: once; a filled order cannot be; unknown ids and
		// another account's orders are not found.
		if err := c.CancelOrder(ctx, open.ID); err != nil {
			t.Fatal(err)
		}
		if st, _ := c.Order(ctx, open.ID); st.Status != brokers.Cancelled || st.CancelledAt == nil {
			t.Errorf("cancelled: %+v", st)
		}
		for _, id := range []string{open.ID, buy.ID} {
			if err := c.CancelOrder(ctx, id); !errors.Is(err, tradekit.ErrConflict) {
				t.Errorf("cancel %s again: %v", id, err)
			}
		}
		other, _ := e.trader(t)
		for _, id := range []string{open.ID, uuid.NewString(), "x"} {
			if _, err := other.Order(ctx, id); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("another account reads %s: %v", id, err)
			}
			if err := other.CancelOrder(ctx, id); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("another account cancels %s: %v", id, err)
			}
		}

		// The history replays the fills in the order they filled: today's
		// equity is the account's.
		h, err := c.History(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := c.Account(ctx)
		if last := h[len(h)-1]; !last.Equity.Equal(a.Equity) {
			t.Errorf("history ends at %s, the account's equity is %s", last.Equity, a.Equity)
		}
		// 100000 − (304.05375 + 0.5) − (267.267 + 0.5) − (89.05 + 0.5) + 7 × 89
		if !a.Equity.Equal(d("99961.12925")) {
			t.Errorf("equity %s", a.Equity)
		}
		// last_equity, from today's fills undone, is yesterday's point:
		// 100000 − 304.55375 + 3 × 101.25.
		var aj alpaca.AccountJSON
		e.get(t, tok, "/v2/account", &aj)
		if y := h[len(h)-2]; !aj.LastEquity.Equal(y.Equity) || !y.Equity.Equal(d("99999.19625")) {
			t.Errorf("last_equity %s, yesterday's point %s", aj.LastEquity, y.Equity)
		}
	})
}

// mustClose stores a close of symbol's asset on date.
func mustClose(t *testing.T, db bun.IDB, symbol, date, close string) {
	t.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	a, err := st.AssetBySymbol(ctx, symbol)
	if err != nil {
		t.Fatal(err)
	}
	day, err := calendar.ParseDate(date)
	if err != nil {
		t.Fatal(err)
	}
	c := d(close)
	if err := st.SavePrices(ctx, []marketdata.Price{{AssetID: a.ID, Date: day, Open: c, High: c, Low: c, Close: c, Volume: 1}}); err != nil {
		t.Fatal(err)
	}
}

// TestMatchExactlyOnce runs the matchers of two Brokers on one database at
// once, with cancels racing them: every order ends filled or cancelled
// exactly once, and the cash and position are exact.
func TestMatchExactlyOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-03-02": "12.5"})
		cfg := paper.Config{SlippageBps: d("4"), Commission: d("0.25")}
		e := mustEnv(t, db, cfg)
		cfg.Now = e.clock.Now
		second := paper.New(db, cfg) // another instance
		c, _ := e.trader(t)
		ctx := context.Background()
		const n = 40
		ids := make([]string, n)
		for i := range ids {
			st, err := c.PlaceOrder(ctx, brokers.OrderRequest{Symbol: "ACME", Side: brokers.Buy, Type: brokers.Market, Quantity: d("2")})
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = st.ID
		}
		var wg sync.WaitGroup
		for _, b := range []*paper.Broker{e.b, second, e.b, second} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					if _, err := b.Match(ctx); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		for i := 0; i < n; i += 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.CancelOrder(ctx, ids[i]); err != nil && !errors.Is(err, tradekit.ErrConflict) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		match(t, e.b)
		filled := 0
		for _, id := range ids {
			st, err := c.Order(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			switch st.Status {
			case brokers.Filled:
				filled++
			case brokers.Cancelled:
			default:
				t.Errorf("order %s is %s", id, st.BrokerStatus)
			}
		}
		// Each fill: 2 × 12.5 × 1.0004 = 25.01, plus 0.25.
		a, _ := c.Account(ctx)
		want := d("100000").Sub(decimal.NewFromInt(int64(filled)).Mul(d("25.26")))
		ps, _ := c.Positions(ctx)
		if !a.Cash.Equal(want) || len(ps) != 1 || !ps[0].Quantity.Equal(decimal.NewFromInt(int64(2*filled))) {
			t.Errorf("%d filled: cash %s (want %s), positions %+v", filled, a.Cash, want, ps)
		}
		if db.Dialect().Name() == dialect.PG && filled == n {
			t.Logf("no cancel won a race this time")
		}
	})
}

// TestPlaceChecksTheTokenFirst checks POST /v2/orders, which checks its
// access token in the statement that locks the account: an order lands
// in the token's account; an unknown, revoked or expired token is
// Alpaca's 401, whether the order is valid or not; and a valid token
// with an invalid order is a 422. GET /v2/orders/{id}, which checks its
// token in the statement that reads the order, is a 401 for such tokens
// whatever the id, and a 404 for another account's order.
func TestPlaceChecksTheTokenFirst(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100.5"})
		mustPrices(t, db, "OTO", map[string]string{"2026-02-27": "100"})
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: time.Hour})
		alice, _ := e.connect(t)
		bob, _ := e.connect(t)
		post := func(token, body string) (int, string) {
			t.Helper()
			req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/paper/v2/orders", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, strings.TrimSpace(readBody(t, resp))
		}
		valid := `{"symbol":"ACME","qty":"1","side":"buy","type":"market","time_in_force":"day"}`
		invalid := `{"symbol":"ACME","qty":"-1","side":"buy","type":"market","time_in_force":"day"}`

		if st, body := post(alice.AccessToken, valid); st != http.StatusOK {
			t.Fatalf("alice's order: %d %s", st, body)
		}
		var orders []alpaca.OrderJSON
		if st := e.get(t, alice.AccessToken, "/v2/orders?status=all", &orders); st != http.StatusOK || len(orders) != 1 ||
			orders[0].Symbol != "ACME" || orders[0].AssetClass != "us_equity" {
			t.Fatalf("alice's orders: %d, %+v, want her 1 on ACME", st, orders)
		}
		aliceOrder := orders[0].ID
		if st := e.get(t, bob.AccessToken, "/v2/orders?status=all", &orders); st != http.StatusOK || len(orders) != 0 {
			t.Fatalf("bob's orders: %d, %d orders, want none", st, len(orders))
		}
		if st, body := post(alice.AccessToken, invalid); st != http.StatusUnprocessableEntity {
			t.Errorf("alice's invalid order: %d %s, want 422", st, body)
		}
		// The asset is read in the statement that locks the account.
		unknownSymbol := strings.Replace(valid, "ACME", "NOPE", 1)
		if st, body := post(alice.AccessToken, unknownSymbol); st != http.StatusUnprocessableEntity || !strings.Contains(body, `\"NOPE\" is not traded here: no Tradekit asset has it`) {
			t.Errorf("an order on an unknown symbol: %d %s, want 422 naming it", st, body)
		}
		if st, body := post(alice.AccessToken, `{"symbol":"OTO","qty":"1","side":"buy","type":"market","time_in_force":"day",`+
			`"order_class":"oto","stop_loss":{"stop_price":"90"}}`); st != http.StatusOK {
			t.Errorf("an OTO order: %d %s", st, body)
		}
		if n, err := db.NewSelect().Table("paper_orders").Where("symbol = 'OTO' AND asset_id IS NOT NULL AND asset_class = 'us_equity'").
			Count(context.Background()); err != nil || n != 2 {
			t.Errorf("the OTO order and its leg with their asset: %d rows (%v), want 2", n, err)
		}

		unknown := []byte(alice.AccessToken) // still base64url, another token
		if unknown[0] = 'A'; alice.AccessToken[0] == 'A' {
			unknown[0] = 'B'
		}
		e.revoke(t, bob.AccessToken)
		e.clock.Add(2 * time.Hour) // alice's token expires
		for name, tok := range map[string]string{"unknown": string(unknown), "revoked": bob.AccessToken, "expired": alice.AccessToken} {
			for kind, body := range map[string]string{"valid": valid, "invalid": invalid, "unknown symbol's": unknownSymbol} {
				if st, got := post(tok, body); st != http.StatusUnauthorized || got != unauthorizedBody {
					t.Errorf("a %s order with the %s token: %d %s, want 401 %s", kind, name, st, got, unauthorizedBody)
				}
			}
		}
		if st := e.get(t, "", "/v2/orders", nil); st != http.StatusUnauthorized {
			t.Errorf("GET /v2/orders without a token: %d", st)
		}
		// GET /v2/orders/{id} checks its token in the statement that
		// reads the order too.
		for name, tok := range map[string]string{"unknown": string(unknown), "revoked": bob.AccessToken, "expired": alice.AccessToken} {
			for _, id := range []string{aliceOrder, uuid.NewString(), "not-an-id"} {
				var e2 alpaca.ErrorJSON
				if st := e.get(t, tok, "/v2/orders/"+id, &e2); st != http.StatusUnauthorized {
					t.Errorf("GET /v2/orders/%s with the %s token: %d, want 401", id, name, st)
				}
			}
		}
		e.clock.Add(-2 * time.Hour)
		carol, _ := e.connect(t)
		for _, c := range []struct {
			tok, id string
			want    int
		}{{alice.AccessToken, aliceOrder, http.StatusOK}, {carol.AccessToken, aliceOrder, http.StatusNotFound},
			{alice.AccessToken, uuid.NewString(), http.StatusNotFound}, {alice.AccessToken, "not-an-id", http.StatusNotFound}} {
			var o alpaca.OrderJSON
			if st := e.get(t, c.tok, "/v2/orders/"+c.id, &o); st != c.want || st == http.StatusOK && o.ID != aliceOrder {
				t.Errorf("GET /v2/orders/%s: %d %s, want %d", c.id, st, o.ID, c.want)
			}
		}
	})
}
