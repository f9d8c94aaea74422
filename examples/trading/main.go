package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tradekit/tradekit/internal/consent"
)

// appURL is where the paper broker sends the browser back: the client
// application's page, which the walkthrough never loads.
const appURL = "https://app.example/done"

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "trading:", err)
		os.Exit(1)
	}
}

// run runs the walkthrough with the command-line arguments args, writing
// to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("trading", flag.ContinueOnError)
	base := fs.String("url", "http://127.0.0.1:8080", "the Tradekit server")
	key := fs.String("key", os.Getenv("TRADEKIT_KEY"), "an API key (default $TRADEKIT_KEY)")
	symbol := fs.String("symbol", "HLXI", "the stock to trade")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *key == "" {
		return errors.New("-key is required (or set TRADEKIT_KEY): tradekit keys create --email you@example.com --name walkthrough --plan pro")
	}
	api := &client{base: strings.TrimRight(*base, "/"), key: *key, http: &http.Client{Timeout: 30 * time.Second}}
	say := func(format string, a ...any) { fmt.Fprintf(out, format+"\n", a...) }

	// Connect: the answer's authorizationUrl is for the user's browser.
	var conn struct{ ID, AuthorizationURL string }
	if err := api.call(ctx, "POST", "/api/v1/brokers/connections", &conn, "provider", "paper", "redirectUrl", appURL); err != nil {
		return err
	}
	back, _, err := consent.Decide(ctx, consent.Browser("app.example", nil), conn.AuthorizationURL, "approve")
	if err != nil {
		return err
	}
	say("connected %s: %s", conn.ID, back.Query().Get("status"))

	// Sync, and wait for the sync's log.
	if err := api.call(ctx, "POST", "/api/v1/brokers/connections/"+conn.ID+"/sync", nil); err != nil {
		return err
	}
	sync, err := api.synced(ctx, conn.ID)
	if err != nil {
		return err
	}
	say("synced: %s, %d positions", sync.Status, sync.PositionsSynced)

	var portfolios []struct {
		Cash, Equity json.Number
	}
	if err := api.call(ctx, "GET", "/api/v1/portfolios", &portfolios); err != nil {
		return err
	}
	say("portfolio: cash %s, equity %s", portfolios[0].Cash, portfolios[0].Equity)

	var g struct{ MaxPositionSizePct json.Number }
	if err := api.call(ctx, "PATCH", "/api/v1/brokers/guardrails", &g, "maxPositionSizePct", maxPositionPct); err != nil {
		return err
	}
	say("guardrails: at most %s%% of equity in one position", g.MaxPositionSizePct)

	// The stock and its latest close.
	var asset struct{ ID, Name string }
	if err := api.call(ctx, "GET", "/api/v1/market-data/assets/symbol/"+url.PathEscape(*symbol), &asset); err != nil {
		return err
	}
	var latest struct {
		Date  string
		Close json.Number
	}
	if err := api.call(ctx, "GET", "/api/v1/market-data/prices/asset/"+asset.ID+"/latest", &latest); err != nil {
		return err
	}
	closing, err := strconv.ParseFloat(latest.Close.String(), 64)
	if err != nil {
		return fmt.Errorf("the latest close %q: %w", latest.Close, err)
	}
	say("%s (%s) closed at %s", *symbol, asset.Name, latest.Close)

	// Preview, then place, a market buy with a stop-loss 10 % below.
	order := []string{"connectionId", conn.ID, "assetId", asset.ID, "side", "buy", "type", "market",
		"quantity", "10", "stopLossPrice", price(closing * 0.9)}
	var preview struct {
		Accepted         bool
		PositionPctAfter json.Number
		Rules            []struct {
			Rule  string
			OK    bool
			Limit json.Number
		}
	}
	if err := api.call(ctx, "POST", "/api/v1/brokers/orders", &preview, append(order, "preview", "true")...); err != nil {
		return err
	}
	say("preview: accepted %t, the position would be %s%% of equity", preview.Accepted, preview.PositionPctAfter)
	var placed struct{ ID, Status string }
	if err := api.call(ctx, "POST", "/api/v1/brokers/orders", &placed,
		append(order, "clientOrderId", "walkthrough-"+strconv.FormatInt(time.Now().UnixNano(), 36))...); err != nil {
		return err
	}
	filled, err := api.filled(ctx, placed.ID)
	if err != nil {
		return err
	}
	say("market buy %s: %s, then %s at %s", placed.ID, placed.Status, filled.Status, filled.FilledPrice)

	// A limit buy far below the price stays open: cancel it.
	var limit struct{ ID, Status string }
	if err := api.call(ctx, "POST", "/api/v1/brokers/orders", &limit, "connectionId", conn.ID, "assetId", asset.ID,
		"side", "buy", "type", "limit", "quantity", "5", "limitPrice", price(closing*0.5)); err != nil {
		return err
	}
	var cancelled struct{ Status string }
	if err := api.call(ctx, "DELETE", "/api/v1/brokers/orders/"+limit.ID, &cancelled); err != nil {
		return err
	}
	say("limit buy %s: %s, then %s", limit.ID, limit.Status, cancelled.Status)

	var orders []struct{ Symbol, Side, Type, Status string }
	if err := api.call(ctx, "GET", "/api/v1/brokers/orders", &orders, "limit", "5"); err != nil {
		return err
	}
	for _, o := range orders {
		say("  %s %s %s: %s", o.Side, o.Type, o.Symbol, o.Status)
	}

	var gone struct{ Status string }
	if err := api.call(ctx, "DELETE", "/api/v1/brokers/connections/"+conn.ID, &gone); err != nil {
		return err
	}
	say("connection %s: %s", conn.ID, gone.Status)
	return nil
}

// maxPositionPct is the guardrail the walkthrough sets: tighter than the
// default 20 % of equity in one position.
const maxPositionPct = "10"

// filledOrder is an order as the walkthrough reads it back.
type filledOrder struct {
	Status      string
	FilledPrice json.Number
}

// filled waits up to 10 s for the order to leave pending, and returns it;
// an order that ends other than filled is an error.
func (c *client) filled(ctx context.Context, id string) (filledOrder, error) {
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(50 * time.Millisecond) {
		var o filledOrder
		if err := c.call(ctx, "GET", "/api/v1/brokers/orders/"+id, &o); err != nil {
			return o, err
		}
		switch o.Status {
		case "pending":
			continue
		case "filled":
			return o, nil
		}
		return o, fmt.Errorf("the market buy %s was %s", id, o.Status)
	}
	return filledOrder{}, fmt.Errorf("the market buy %s did not fill within 10 s", id)
}

// price formats p as an order price: two decimals.
func price(p float64) string { return strconv.FormatFloat(p, 'f', 2, 64) }

// client calls the API with a key.
type client struct {
	base, key string
	http      *http.Client
}

// call sends method path?kv… and decodes the answer's data into out (nil:
// ignored). An error answer is an error with the API's code and message.
func (c *client) call(ctx context.Context, method, path string, out any, kv ...string) error {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var body struct {
		Data  json.RawMessage
		Error *struct{ Code, Message string }
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s %s: %d, not JSON: %w", method, path, res.StatusCode, err)
	}
	if body.Error != nil {
		return fmt.Errorf("%s %s: %d %s: %s", method, path, res.StatusCode, body.Error.Code, body.Error.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body.Data, out)
}

// syncLog is a sync as the connection's logs show it.
type syncLog struct {
	Status          string
	PositionsSynced int
	Error           string
}

// synced waits up to 10 s for the connection's latest sync to end, and
// returns it; a failed sync is an error.
func (c *client) synced(ctx context.Context, connectionID string) (syncLog, error) {
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(100 * time.Millisecond) {
		var logs []syncLog
		if err := c.call(ctx, "GET", "/api/v1/brokers/connections/"+connectionID+"/logs", &logs); err != nil {
			return syncLog{}, err
		}
		if len(logs) == 0 || logs[0].Status == "syncing" {
			continue
		}
		if logs[0].Status == "failed" {
			return logs[0], fmt.Errorf("the sync failed: %s", logs[0].Error)
		}
		return logs[0], nil
	}
	return syncLog{}, errors.New("the sync did not end within 10 s")
}
