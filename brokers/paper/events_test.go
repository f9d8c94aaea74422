package paper_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// streamWait bounds every wait for a trade update.
const streamWait = 10 * time.Second

// mustStream runs the SDK's StreamTradeUpdates with req, which must end
// of itself (until or until_id), and returns the updates.
func mustStream(t *testing.T, c *sdk.Client, req sdk.StreamTradeUpdatesRequest) []sdk.TradeUpdate {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	defer cancel()
	var got []sdk.TradeUpdate
	if err := c.StreamTradeUpdates(ctx, func(u sdk.TradeUpdate) { got = append(got, u) }, req); err != nil {
		t.Fatalf("StreamTradeUpdates(%+v): %v", req, err)
	}
	return got
}

// mustPlace places an order with the SDK and fails the test on error.
func mustPlace(t *testing.T, c *sdk.Client, req sdk.PlaceOrderRequest) *sdk.Order {
	t.Helper()
	o, err := c.PlaceOrder(req)
	if err != nil {
		t.Fatalf("PlaceOrder(%s): %v", req.ClientOrderID, err)
	}
	return o
}

// mustMatch runs the matching engine once.
func mustMatch(t *testing.T, e *env) {
	t.Helper()
	if _, err := e.b.Match(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// nextUpdate returns the next update from ch, failing the test after
// streamWait.
func nextUpdate(t *testing.T, ch <-chan sdk.TradeUpdate) sdk.TradeUpdate {
	t.Helper()
	select {
	case u := <-ch:
		return u
	case <-time.After(streamWait):
		t.Fatal("no trade update")
		return sdk.TradeUpdate{}
	}
}

// summary is what the tests compare of a trade update.
type summary struct {
	Event, ClientOrderID, Status string
	At                           time.Time
	Price, Qty, PositionQty      string // fills only
}

func summarize(us []sdk.TradeUpdate) []summary {
	out := make([]summary, len(us))
	for i, u := range us {
		out[i] = summary{Event: u.Event, ClientOrderID: u.Order.ClientOrderID, Status: u.Order.Status, At: u.At.UTC()}
		if u.Price != nil && u.Qty != nil && u.PositionQty != nil {
			out[i].Price, out[i].Qty, out[i].PositionQty = u.Price.String(), u.Qty.String(), u.PositionQty.String()
		}
	}
	return out
}

// checkOrdered fails the test unless the updates' ids increase strictly:
// no duplicates, and in order.
func checkOrdered(t *testing.T, us []sdk.TradeUpdate) {
	t.Helper()
	for i := 1; i < len(us); i++ {
		if us[i].EventID <= us[i-1].EventID {
			t.Errorf("event %d id %s is not after event %d's, %s", i, us[i].EventID, i-1, us[i-1].EventID)
		}
	}
}

// TestTradeUpdates drives GET /v2/events/trades with the official SDK's
// StreamTradeUpdates: the history of an account's orders (placed,
// filled, cancelled, replaced) with each range parameter, the same
// stream through an API key, the errors, and a live stream that replays
// from an id and then sends the new and fill events of an order placed
// while it is open, each once.
func TestTradeUpdates(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100", "2026-03-02": "102"})
		e := mustEnv(t, db, paper.Config{StreamPoll: 20 * time.Millisecond})
		tok, accountID := e.connect(t)
		c := sdk.NewClient(sdk.ClientOpts{OAuth: tok.AccessToken, BaseURL: e.srv.URL + "/paper", HTTPClient: e.srv.Client(), RetryLimit: 1})
		sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

		// The history, one second apart: a market buy filled, a limit
		// buy cancelled, a limit sell replaced, a market sell filled.
		buy := mustPlace(t, c, sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("10"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.Day, ClientOrderID: "buy"})
		e.clock.Add(time.Second)
		mustMatch(t, e)
		e.clock.Add(time.Second)
		rest := mustPlace(t, c, sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("2"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("50"), TimeInForce: sdk.GTC, ClientOrderID: "rest"})
		e.clock.Add(time.Second)
		if err := c.CancelOrder(rest.ID); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time.Second)
		old := mustPlace(t, c, sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("1"), Side: sdk.Sell, Type: sdk.Limit, LimitPrice: dec("500"), TimeInForce: sdk.GTC, ClientOrderID: "old"})
		e.clock.Add(time.Second)
		if _, err := c.ReplaceOrder(old.ID, sdk.ReplaceOrderRequest{LimitPrice: dec("400"), ClientOrderID: "new"}); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time.Second)
		mustPlace(t, c, sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("4"), Side: sdk.Sell, Type: sdk.Market, TimeInForce: sdk.Day, ClientOrderID: "sell"})
		e.clock.Add(time.Second)
		mustMatch(t, e)

		all := mustStream(t, c, sdk.StreamTradeUpdatesRequest{Until: e.clock.Now()})
		want := []summary{
			{Event: "new", ClientOrderID: "buy", Status: "new", At: sec(0)},
			{Event: "fill", ClientOrderID: "buy", Status: "filled", At: sec(1), Price: "102", Qty: "10", PositionQty: "10"},
			{Event: "new", ClientOrderID: "rest", Status: "new", At: sec(2)},
			{Event: "canceled", ClientOrderID: "rest", Status: "canceled", At: sec(3)},
			{Event: "new", ClientOrderID: "old", Status: "new", At: sec(4)},
			{Event: "replaced", ClientOrderID: "old", Status: "replaced", At: sec(5)},
			{Event: "new", ClientOrderID: "new", Status: "new", At: sec(5)},
			{Event: "new", ClientOrderID: "sell", Status: "new", At: sec(6)},
			{Event: "fill", ClientOrderID: "sell", Status: "filled", At: sec(7), Price: "102", Qty: "4", PositionQty: "6"},
		}
		if diff := cmp.Diff(want, summarize(all)); diff != "" {
			t.Fatalf("StreamTradeUpdates(until) mismatch (-want +got):\n%s", diff)
		}
		checkOrdered(t, all)
		// Each event carries the order as of the event; a fill its
		// execution.
		if u := all[0]; u.Order.ID != buy.ID || !u.Order.FilledQty.IsZero() || u.Order.FilledAt != nil || !u.Order.UpdatedAt.Equal(sec(0)) || u.Price != nil || u.Timestamp != nil {
			t.Errorf("the new event of the buy: %+v", u)
		}
		if u := all[1]; u.Order.FilledAt == nil || !u.Order.FilledAt.Equal(sec(1)) || u.Timestamp == nil || !u.Timestamp.Equal(sec(1)) ||
			u.ExecutionID == "" || uuid.Validate(u.ExecutionID) != nil || !u.Order.FilledAvgPrice.Equal(d("102")) {
			t.Errorf("the fill of the buy: %+v", u)
		}
		if u := all[6]; u.Order.ReplacedBy != nil || u.Order.Replaces == nil || *u.Order.Replaces != old.ID {
			t.Errorf("the new event of the replacement: replaces %v, replaced_by %v", u.Order.Replaces, u.Order.ReplacedBy)
		}
		if u := all[5]; u.Order.ReplacedBy == nil || u.Order.ReplacedAt == nil || !u.Order.ReplacedAt.Equal(sec(5)) {
			t.Errorf("the replaced event: %+v", u.Order)
		}

		// The ranges: since_id exclusive, until_id inclusive, since and
		// until inclusive; ids are the same on every read.
		ranges := []struct {
			name string
			req  sdk.StreamTradeUpdatesRequest
			want []sdk.TradeUpdate
		}{
			{"since_id", sdk.StreamTradeUpdatesRequest{SinceID: all[1].EventID, Until: sec(7)}, all[2:]},
			{"until_id", sdk.StreamTradeUpdatesRequest{UntilID: all[3].EventID}, all[:4]},
			{"since_id until_id", sdk.StreamTradeUpdatesRequest{SinceID: all[3].EventID, UntilID: all[6].EventID}, all[4:7]},
			{"since until", sdk.StreamTradeUpdatesRequest{Since: sec(3), Until: sec(5)}, all[3:7]},
			{"until before all", sdk.StreamTradeUpdatesRequest{Until: t0.Add(-time.Hour)}, nil},
		}
		for _, tt := range ranges {
			got := mustStream(t, c, tt.req)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("StreamTradeUpdates(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		}

		// An API key reads the same stream.
		key, secret, err := e.b.CreateAPIKey(context.Background(), uuid.MustParse(accountID), "bot")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all, mustStream(t, e.keyClient(key.ID, secret), sdk.StreamTradeUpdatesRequest{Until: sec(7)})); diff != "" {
			t.Errorf("StreamTradeUpdates with an API key mismatch (-want +got):\n%s", diff)
		}

		// Errors come before the stream, in Alpaca's JSON.
		for name, tt := range map[string]struct {
			c      *sdk.Client
			req    sdk.StreamTradeUpdatesRequest
			status string
		}{
			"bad since_id": {c, sdk.StreamTradeUpdatesRequest{SinceID: "not-an-event-id"}, "(HTTP 422)"},
			"bad until_id": {c, sdk.StreamTradeUpdatesRequest{UntilID: "8ZZZZZZZZZZZZZZZZZZZZZZZZZ"}, "(HTTP 422)"},
			"bad token":    {sdk.NewClient(sdk.ClientOpts{OAuth: "nope", BaseURL: e.srv.URL + "/paper", RetryLimit: 1}), sdk.StreamTradeUpdatesRequest{}, "(HTTP 401)"},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), streamWait)
			err := tt.c.StreamTradeUpdates(ctx, func(u sdk.TradeUpdate) { t.Errorf("%s: got %+v", name, u) }, tt.req)
			cancel()
			if err == nil || !strings.Contains(err.Error(), tt.status) || !strings.Contains(err.Error(), `"code":`) {
				t.Errorf("%s: %v, want Alpaca's JSON error %s", name, err, tt.status)
			}
		}

		// Live: a stream from since_id replays what follows, then sends
		// an order's events as the matching engine runs.
		runCtx, stopRun := context.WithCancel(context.Background())
		defer stopRun()
		go e.b.Run(runCtx)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		updates := make(chan sdk.TradeUpdate, 16)
		done := make(chan error, 1)
		go func() {
			done <- c.StreamTradeUpdates(ctx, func(u sdk.TradeUpdate) { updates <- u }, sdk.StreamTradeUpdatesRequest{SinceID: all[6].EventID})
		}()
		got := []sdk.TradeUpdate{nextUpdate(t, updates), nextUpdate(t, updates)}
		if diff := cmp.Diff(all[7:], got); diff != "" {
			t.Errorf("the live stream's replay mismatch (-want +got):\n%s", diff)
		}
		live := mustPlace(t, c, sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.Day, ClientOrderID: "live"})
		got = append(got, nextUpdate(t, updates), nextUpdate(t, updates))
		want = []summary{
			{Event: "new", ClientOrderID: "live", Status: "new", At: sec(7)},
			{Event: "fill", ClientOrderID: "live", Status: "filled", At: sec(7), Price: "102", Qty: "1", PositionQty: "7"},
		}
		if diff := cmp.Diff(want, summarize(got[2:])); diff != "" {
			t.Errorf("the live events mismatch (-want +got):\n%s", diff)
		}
		if got[2].Order.ID != live.ID {
			t.Errorf("live new event of order %s, want %s", got[2].Order.ID, live.ID)
		}
		checkOrdered(t, got)
		// Nothing is sent twice: a few more polls bring nothing.
		select {
		case u := <-updates:
			t.Errorf("an update after the live order's: %+v", u)
		case <-time.After(200 * time.Millisecond):
		}
		// An order whose time is before the last event sent, as when its
		// transaction commits after a later one's (here the clock steps
		// back), still reaches the open stream within its lookback,
		// though after events of greater ids.
		e.clock.Set(sec(6))
		mustPlace(t, c, sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("1"), TimeInForce: sdk.GTC, ClientOrderID: "late"})
		want = []summary{{Event: "new", ClientOrderID: "late", Status: "new", At: sec(6)}}
		if diff := cmp.Diff(want, summarize([]sdk.TradeUpdate{nextUpdate(t, updates)})); diff != "" {
			t.Errorf("the late order's events mismatch (-want +got):\n%s", diff)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(streamWait):
			t.Fatal("StreamTradeUpdates did not return once its context was cancelled")
		}
		// The live events are in the history too, with the same ids.
		if diff := cmp.Diff(got[2:], mustStream(t, c, sdk.StreamTradeUpdatesRequest{SinceID: all[8].EventID, Until: sec(7)})); diff != "" {
			t.Errorf("the history of the live events mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestTradeUpdatesInBackground drives the SDK's
// StreamTradeUpdatesInBackground: it gets the events of a bracket order
// placed while it runs (the entry's new and fill, then the legs' new
// events when the entry fills), and stops when its context is
// cancelled, which lets the server close.
func TestTradeUpdatesInBackground(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100", "2026-03-02": "102"})
		e := mustEnv(t, db, paper.Config{StreamPoll: 20 * time.Millisecond})
		tok, _ := e.connect(t)
		c := sdk.NewClient(sdk.ClientOpts{OAuth: tok.AccessToken, BaseURL: e.srv.URL + "/paper", HTTPClient: e.srv.Client(), RetryLimit: 1})
		runCtx, stopRun := context.WithCancel(context.Background())
		defer stopRun()
		go e.b.Run(runCtx)

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		updates := make(chan sdk.TradeUpdate, 16)
		c.StreamTradeUpdatesInBackground(ctx, func(u sdk.TradeUpdate) { updates <- u })
		// Nothing has happened yet; give the stream time to open before
		// the order, which it must see live.
		select {
		case u := <-updates:
			t.Fatalf("an update before any order: %+v", u)
		case <-time.After(100 * time.Millisecond):
		}
		entry := mustPlace(t, c, sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("3"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.GTC,
			OrderClass: sdk.Bracket, TakeProfit: &sdk.TakeProfit{LimitPrice: dec("150")}, StopLoss: &sdk.StopLoss{StopPrice: dec("80")}})
		var got []sdk.TradeUpdate
		for range 4 {
			got = append(got, nextUpdate(t, updates))
		}
		var events []string
		for _, u := range got {
			role := "entry"
			if u.Order.ID != entry.ID {
				role = "leg " + string(u.Order.Type)
			}
			events = append(events, u.Event+" "+role+" "+u.Order.Status)
		}
		want := []string{"new entry new", "fill entry filled", "new leg limit new", "new leg stop new"}
		if diff := cmp.Diff(want, events); diff != "" {
			t.Errorf("the bracket's events mismatch (-want +got):\n%s", diff)
		}
		checkOrdered(t, got)
		if p := got[1].PositionQty; p == nil || !p.Equal(d("3")) {
			t.Errorf("position_qty after the entry's fill: %v, want 3", p)
		}

		// Cancelled, the background stream lets go of its request, so
		// that the server can close: httptest.Server.Close waits for
		// every request in flight.
		cancel()
		closed := make(chan struct{})
		go func() {
			e.srv.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(streamWait):
			t.Fatal("the server did not close: the background stream is still open")
		}
		select {
		case u := <-updates:
			t.Errorf("an update after the context was cancelled: %+v", u)
		default:
		}
	})
}

// TestTradeUpdatesTimeouts reads a live stream through a server whose
// ReadTimeout and WriteTimeout are far shorter than the stream: it stays
// open past both, with keep-alive comments while idle, sends an order
// placed after them, and is cut short, not ended, by EndStreams (as a
// server's shutdown calls it), so that a client knows to reconnect;
// a stream opened after EndStreams is cut at once.
func TestTradeUpdatesTimeouts(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100", "2026-03-02": "102"})
		e := mustEnv(t, db, paper.Config{StreamPoll: 20 * time.Millisecond, StreamKeepAlive: 50 * time.Millisecond})
		tok, _ := e.connect(t)
		mux := http.NewServeMux()
		mux.Handle("/paper/", http.StripPrefix("/paper", e.b.Handler()))
		srv := httptest.NewUnstartedServer(mux)
		srv.Config.ReadTimeout, srv.Config.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond
		srv.Start()
		defer srv.Close()
		// The orders go through a server without the short timeouts: a
		// placement on a loaded machine may take longer than they allow.
		api := httptest.NewServer(mux)
		defer api.Close()
		c := sdk.NewClient(sdk.ClientOpts{OAuth: tok.AccessToken, BaseURL: api.URL + "/paper", HTTPClient: api.Client(), RetryLimit: 1})

		open := func() (*http.Response, *bufio.Reader) {
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/paper/v2/events/trades", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("GET /v2/events/trades: %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
			}
			return resp, bufio.NewReader(resp.Body)
		}
		resp, r := open()
		defer resp.Body.Close()
		// readUntil reads lines until one starts with prefix, after at least
		// min since start, and returns it.
		start := time.Now()
		readUntil := func(prefix string, min time.Duration) string {
			t.Helper()
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("reading the stream, waiting for %q: %v", prefix, err)
				}
				if strings.HasPrefix(line, prefix) && time.Since(start) >= min {
					return line
				}
			}
		}
		readUntil(": keep-alive", 500*time.Millisecond)
		mustPlace(t, c, sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("1"), TimeInForce: sdk.GTC, ClientOrderID: "late"})
		if line := readUntil("data: ", 0); !strings.Contains(line, `"event":"new"`) || !strings.Contains(line, `"client_order_id":"late"`) {
			t.Errorf("the late order's event: %s", line)
		}

		e.b.EndStreams()
		if _, err := io.Copy(io.Discard, r); err == nil {
			t.Error("the stream ended cleanly after EndStreams; want it cut short")
		}
		resp2, r2 := open()
		defer resp2.Body.Close()
		if _, err := io.Copy(io.Discard, r2); err == nil {
			t.Error("a stream opened after EndStreams ended cleanly; want it cut short")
		}
		// A bounded stream still ends cleanly.
		if got := mustStream(t, c, sdk.StreamTradeUpdatesRequest{Until: e.clock.Now()}); len(got) != 1 || got[0].Order.ClientOrderID != "late" {
			t.Errorf("StreamTradeUpdates(until) after EndStreams: %+v", got)
		}
	})
}

// TestSDKCoverage fails when a method of the official SDK's Trading
// client is called nowhere in this package's tests, so that SDK coverage
// cannot silently shrink when the SDK grows or a test is trimmed.
func TestSDKCoverage(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range entries {
		if strings.HasSuffix(f.Name(), "_test.go") {
			b, err := os.ReadFile(f.Name())
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
		}
	}
	typ := reflect.TypeFor[*sdk.Client]()
	if typ.NumMethod() < 30 {
		t.Fatalf("*alpaca.Client has %d exported methods: the SDK changed shape", typ.NumMethod())
	}
	var missing []string
	for i := range typ.NumMethod() {
		if name := typ.Method(i).Name; !strings.Contains(src.String(), "."+name+"(") {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("methods of *alpaca.Client that no test of brokers/paper calls: %s", strings.Join(missing, ", "))
	}
}
