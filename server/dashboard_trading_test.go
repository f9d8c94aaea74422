package server_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// mustDashboardTrader stores a pro-plan user with a password, signs them
// in with a new visitor, connects a paper account for them through the
// API and returns the visitor, the user's API key and the connection id.
func mustDashboardTrader(t *testing.T, ts tradingServer, db bun.IDB, email string) (v *visitor, key, conn string) {
	t.Helper()
	mustDashboardUser(t, db, email, false, email+" password")
	_, key, err := billing.NewStore(db).CreateKey(context.Background(), mustUserID(t, db, email), "dashboard test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conn = connectPaper(t, ts, key)
	v = newVisitor(t, ts.url)
	v.signIn(email, email+" password")
	return v, key, conn
}

// asSentence is how the dashboard shows the API's error message msg:
// capitalised, with a full stop, and without the name of the parameter
// param ("param: what is wrong"), when not empty, whose field it is beside.
func asSentence(param, msg string) string {
	msg = strings.TrimPrefix(msg, param+": ")
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
}

var orderRow = regexp.MustCompile(`<tr id="order-([0-9a-f-]{36})">`)

// orderIDs returns the ids of the orders a page lists, in its order.
func orderIDs(page string) []string {
	var ids []string
	for _, m := range orderRow.FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// rowOf returns the table row of the order id on a page, unescaped; ""
// when the page does not list it.
func rowOf(page, id string) string {
	i := strings.Index(page, `<tr id="order-`+id+`">`)
	if i < 0 {
		return ""
	}
	row := page[i:]
	if j := strings.Index(row, "</tr>"); j >= 0 {
		row = row[:j]
	}
	return html.UnescapeString(row)
}

// TestDashboardOrders covers the orders page over HTTP on both
// databases: the user's orders and no one else's, newest first, 20 a
// page, filtered by status, with their prices, fill and reject reason;
// cancelling a pending order, and the reason beside an order that cannot
// be cancelled, in the API's words.
func TestDashboardOrders(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		ts := startOrders(t, db, nil)
		v, key, conn := mustDashboardTrader(t, ts, db, "trader@example.com")

		_, _, page := v.do("/dashboard/orders", nil)
		if !strings.Contains(page, "No orders yet") || !strings.Contains(page, `<a href="/dashboard/orders">Orders</a>`) {
			t.Fatalf("orders page without orders:\n%s", mainOf(page))
		}
		token := v.csrf(page)

		// A market buy that fills, a far limit that rests, and one that
		// a guardrail set in the dashboard rejects.
		filled := ts.order(t, key, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "market",
			"quantity", "10", "stopLossPrice", "50.5").object(t)["id"].(string)
		ts.waitOrder(t, key, filled, "filled")
		rest := ts.order(t, key, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "limit",
			"quantity", "3", "limitPrice", "20.125").object(t)["id"].(string)
		if s, _, p := v.do("/dashboard/guardrails", url.Values{"csrf": {token}, "maxDailyTrades": {"100"}, "maxPositionSizePct": {"20"},
			"maxPortfolioRiskPct": {"10"}, "allowedAssetTypes": {"stock"}}); s != http.StatusSeeOther {
			t.Fatalf("allow stocks only: %d\n%s", s, mainOf(p))
		}
		refused := ts.order(t, key, "connectionId", conn, "assetId", tkixID.String(), "side", "buy", "type", "market", "quantity", "1")
		rejected := rejectDetails(t, "an ETF", refused)["orderId"].(string)
		reason := ts.call(t, "GET", "/api/v1/brokers/orders/"+rejected, key).object(t)["rejectReason"].(string)
		// Eighteen more far limits: 21 orders, two pages.
		var newest string
		for range 18 {
			newest = ts.order(t, key, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "limit",
				"quantity", "1", "limitPrice", "20").object(t)["id"].(string)
		}
		// Another user's order, which the trader must not see or cancel.
		bob := mustKey(t, db, "bob@example.com", "pro")
		bobs := ts.order(t, bob, "connectionId", connectPaper(t, ts, bob), "assetId", widgID.String(), "side", "buy", "type", "limit",
			"quantity", "2", "limitPrice", "20").object(t)["id"].(string)

		var apiIDs []string
		for _, o := range ts.call(t, "GET", "/api/v1/brokers/orders?limit=100", key).list(t) {
			apiIDs = append(apiIDs, o["id"].(string))
		}
		_, _, page = v.do("/dashboard/orders", nil)
		ids := orderIDs(page)
		if diff := cmp.Diff(apiIDs[:20], ids); diff != "" || ids[0] != newest {
			t.Errorf("page 1: not the API's first 20 orders, newest first (-want +got):\n%s", diff)
		}
		if !strings.Contains(page, "Page 1 of 2 (21 orders)") || !strings.Contains(page, `<a href="/dashboard/orders?page=2">Older →</a>`) ||
			strings.Contains(page, "Newer") {
			t.Errorf("page 1's pagination:\n%s", mainOf(page))
		}
		if n := strings.Count(page, `aria-label="Cancel the order to buy 1 WIDG"`); n != 18 {
			t.Errorf("%d Cancel buttons on the 1-unit limits, want 18", n)
		}
		if row := rowOf(page, rest); !strings.Contains(row, ">pending<") || !strings.Contains(row, ">20.125 / –<") ||
			!strings.Contains(row, `<td data-label="Quantity" class="num">3</td>`) || !strings.Contains(row, ">limit<") ||
			!strings.Contains(row, `action="/dashboard/orders/`+rest+`/cancel"`) || !strings.Contains(row, "paper") {
			t.Errorf("the resting limit's row:\n%s", row)
		}
		if row := rowOf(page, rejected); !strings.Contains(row, ">rejected<") || !strings.Contains(row, ">TKIX<") ||
			!strings.Contains(row, reason) || strings.Contains(row, "<form") {
			t.Errorf("the rejected order's row, want its reason %q:\n%s", reason, row)
		}
		if strings.Contains(page, bobs) {
			t.Error("the trader's orders page lists another user's order")
		}
		_, _, page = v.do("/dashboard/orders?page=2", nil)
		if ids := orderIDs(page); len(ids) != 1 || ids[0] != filled {
			t.Errorf("page 2: %v, want only the first order %s", ids, filled)
		}
		row := rowOf(page, filled)
		if !strings.Contains(row, ">filled<") || !strings.Contains(row, ">market<") || !strings.Contains(row, ">– / 50.5<") ||
			!strings.Contains(row, `<td data-label="Filled price" class="num">57.278625</td>`) || strings.Contains(row, "<form") {
			t.Errorf("the filled order's row (57.25 × 1.0005):\n%s", row)
		}
		if !strings.Contains(page, `<a href="/dashboard/orders">← Newer</a>`) || strings.Contains(page, "Older") {
			t.Errorf("page 2's pagination:\n%s", mainOf(page))
		}
		for q, want := range map[string]int{"status=pending": 19, "status=rejected": 1, "status=filled": 1, "status=cancelled": 0, "status=nonsense": 20} {
			if _, _, p := v.do("/dashboard/orders?"+q, nil); len(orderIDs(p)) != want {
				t.Errorf("?%s: %d orders, want %d", q, len(orderIDs(p)), want)
			}
		}

		// Cancelling: the form token is required; then the order is
		// cancelled at the broker, and the list comes back as it was.
		cancel := "/dashboard/orders/" + rest + "/cancel?status=pending"
		if s, _, _ := v.do(cancel, url.Values{}); s != http.StatusForbidden {
			t.Errorf("cancel without the form token: %d, want 403", s)
		}
		s, h, _ := v.do(cancel, url.Values{"csrf": {token}})
		to, _ := url.Parse(h.Get("Location"))
		if s != http.StatusSeeOther || to.Path != "/dashboard/orders" || to.Query().Get("status") != "pending" {
			t.Fatalf("cancel: %d to %q", s, h.Get("Location"))
		}
		_, _, page = v.do(to.RequestURI(), nil)
		if !strings.Contains(page, "Cancelled the order.") || strings.Contains(page, rest) || len(orderIDs(page)) != 18 {
			t.Errorf("pending orders after cancelling one:\n%s", mainOf(page))
		}
		if o := ts.call(t, "GET", "/api/v1/brokers/orders/"+rest, key).object(t); o["status"] != "cancelled" {
			t.Errorf("the API after cancelling in the dashboard: %v", o["status"])
		}

		// Orders that cannot be cancelled: the API's reason, beside the
		// order when the page lists it, else at the top.
		for _, c := range []struct {
			name, id, query string
			status          int
			listed          bool
		}{
			{"cancelled already", rest, "", http.StatusConflict, true},
			{"filled", filled, "?page=2", http.StatusConflict, true},
			{"cancelled, under a filter that hides it", rest, "?status=pending", http.StatusConflict, false},
			{"another user's", bobs, "", http.StatusNotFound, false},
		} {
			msg := ts.call(t, "DELETE", "/api/v1/brokers/orders/"+c.id, key).errorMessage()
			if c.name == "another user's" {
				msg = ts.call(t, "GET", "/api/v1/brokers/orders/"+c.id, key).errorMessage()
			}
			s, _, p := v.do("/dashboard/orders/"+c.id+"/cancel"+c.query, url.Values{"csrf": {token}})
			p = html.UnescapeString(p)
			beside := `<p class="error" role="alert" id="order-` + c.id + `-error">` + asSentence("", msg) + `</p>`
			top := `<p class="error" role="alert">` + asSentence("", msg) + `</p>`
			head, _, _ := strings.Cut(p, "<table>")
			switch {
			case s != c.status || msg == "":
				t.Errorf("%s: %d, want %d with the API's message %q", c.name, s, c.status, msg)
			case c.listed && (!strings.Contains(rowOf(p, c.id), beside) || strings.Contains(p, top)):
				t.Errorf("%s: want %q beside the order:\n%s", c.name, beside, mainOf(p))
			case !c.listed && (!strings.Contains(head, top) || rowOf(p, c.id) != ""):
				t.Errorf("%s: want %q at the top:\n%s", c.name, top, mainOf(p))
			}
		}
		if o := ts.call(t, "GET", "/api/v1/brokers/orders/"+bobs, bob).object(t); o["status"] != "pending" {
			t.Errorf("bob's order after the trader's try: %v", o["status"])
		}
		if s, _, _ := v.do("/dashboard/orders/nope/cancel", url.Values{"csrf": {token}}); s != http.StatusNotFound {
			t.Errorf("cancel of no UUID: %d, want 404", s)
		}
	})
}

// TestDashboardGuardrails covers the guardrails page over HTTP on both
// databases: the user's guardrails in the form; each field refused as
// the API refuses the same value, in the same words, beside the field,
// with every bad field reported at once; a refused form changes nothing;
// a good one is what the API then reads.
func TestDashboardGuardrails(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts := startTrading(t, db)
		v, key, _ := mustDashboardTrader(t, ts, db, "guarded@example.com")
		const path = "/dashboard/guardrails"

		_, _, page := v.do(path, nil)
		token := v.csrf(page)
		for _, want := range []string{`name="maxDailyTrades" type="text" inputmode="numeric" value="25"`,
			`name="maxPositionSizePct" type="text" inputmode="decimal" value="20"`, `name="maxPortfolioRiskPct" type="text" inputmode="decimal" value="10"`,
			`<input name="stopLossRequired" type="checkbox">`, "Last changed", `<a href="/dashboard/guardrails">Guardrails</a>`} {
			if !strings.Contains(page, want) {
				t.Errorf("the defaults' page lacks %s:\n%s", want, mainOf(page))
			}
		}
		if n := strings.Count(page, `name="allowedAssetTypes" type="checkbox"`); n != 5 || strings.Count(page, " checked>") != 5 {
			t.Errorf("%d asset type boxes, %d checked; want 5 of 5", n, strings.Count(page, " checked>"))
		}

		good := url.Values{"csrf": {token}, "maxDailyTrades": {"10"}, "maxPositionSizePct": {"12.5"}, "maxPortfolioRiskPct": {"2.25"},
			"stopLossRequired": {"on"}, "allowedAssetTypes": {"etf", "stock"}}
		with := func(field string, value ...string) url.Values {
			f := url.Values{}
			for k, v := range good {
				f[k] = v
			}
			f[field] = value
			return f
		}
		if s, _, _ := v.do(path, with("csrf")); s != http.StatusForbidden {
			t.Errorf("save without the form token: %d, want 403", s)
		}
		// Each bad value, also sent to the API: the same words, beside the
		// field.
		for _, c := range []struct{ field, value string }{
			{"maxDailyTrades", "0"}, {"maxDailyTrades", "2.5"}, {"maxDailyTrades", "abc"}, {"maxDailyTrades", "100001"},
			{"maxPositionSizePct", "0"}, {"maxPositionSizePct", "100.01"}, {"maxPositionSizePct", "abc"},
			{"maxPortfolioRiskPct", "-1"}, {"maxPortfolioRiskPct", "1.00001"}, {"allowedAssetTypes", "bonds"},
		} {
			api := ts.call(t, "PATCH", "/api/v1/brokers/guardrails?"+query(c.field, c.value), key)
			if api.status != http.StatusBadRequest {
				t.Fatalf("the API takes %s=%s: %s", c.field, c.value, api.raw)
			}
			want := `<p class="error" id="` + c.field + `-error">` + asSentence(c.field, api.errorMessage()) + `</p>`
			s, _, p := v.do(path, with(c.field, c.value))
			if p = html.UnescapeString(p); s != http.StatusBadRequest || !strings.Contains(p, want) || strings.Count(p, `class="error"`) != 1 {
				t.Errorf("%s=%s: %d, want 400 with only %s\n%s", c.field, c.value, s, want, mainOf(p))
			}
			if c.field != "allowedAssetTypes" && !strings.Contains(p, fmt.Sprintf(`id="%s" name="%s" type="text" inputmode=`, c.field, c.field)) {
				t.Errorf("%s=%s: no field %s", c.field, c.value, c.field)
			}
			if c.field != "allowedAssetTypes" && !regexp.MustCompile(`name="`+c.field+`"[^>]*value="`+regexp.QuoteMeta(c.value)+
				`" aria-describedby="`+c.field+`-hint `+c.field+`-error" aria-invalid="true">`).MatchString(p) {
				t.Errorf("%s=%s: the field does not keep the value, or is not marked invalid", c.field, c.value)
			}
		}
		// No asset type: a form can say so, the API cannot.
		s, _, p := v.do(path, with("allowedAssetTypes"))
		if s != http.StatusBadRequest || !strings.Contains(p, `<p class="error" id="allowedAssetTypes-error">Give at least one asset type: stock, etf, fx, crypto, commodity.</p>`) {
			t.Errorf("no asset type: %d\n%s", s, mainOf(p))
		}
		// Every bad field at once, the others kept as posted.
		bad := with("maxDailyTrades", "0")
		bad.Set("maxPortfolioRiskPct", "lots")
		bad.Del("stopLossRequired")
		s, _, p = v.do(path, bad)
		if s != http.StatusBadRequest || !strings.Contains(p, `id="maxDailyTrades-error"`) || !strings.Contains(p, `id="maxPortfolioRiskPct-error"`) ||
			!strings.Contains(p, `value="12.5"`) || !strings.Contains(p, `<input name="stopLossRequired" type="checkbox">`) ||
			!strings.Contains(p, `value="etf" checked>`) || strings.Contains(p, `value="fx" checked>`) {
			t.Errorf("two bad fields: %d\n%s", s, mainOf(p))
		}
		defaults := ts.call(t, "GET", "/api/v1/brokers/guardrails", key).object(t)
		if defaults["maxDailyTrades"] != 25.0 {
			t.Errorf("refused forms changed the guardrails: %v", defaults)
		}

		// A good form: saved, and what the API reads.
		s, h, _ := v.do(path, good)
		if s != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), path+"?notice=") {
			t.Fatalf("save: %d to %q", s, h.Get("Location"))
		}
		got := ts.call(t, "GET", "/api/v1/brokers/guardrails", key).object(t)
		delete(got, "updatedAt")
		want := map[string]any{"maxDailyTrades": 10.0, "maxPositionSizePct": 12.5, "maxPortfolioRiskPct": 2.25, "stopLossRequired": true,
			"allowedAssetTypes": []any{"stock", "etf"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the API after saving (-want +got):\n%s", diff)
		}
		_, _, page = v.do(h.Get("Location"), nil)
		if !strings.Contains(page, "Saved your guardrails") || !strings.Contains(page, `value="12.5"`) || !strings.Contains(page, `value="2.25"`) ||
			!strings.Contains(page, `<input name="stopLossRequired" type="checkbox" checked>`) || strings.Count(page, " checked>") != 3 {
			t.Errorf("the page after saving:\n%s", mainOf(page))
		}
		// An unchecked box turns its guardrail off.
		off := with("stopLossRequired")
		if s, _, _ := v.do(path, off); s != http.StatusSeeOther {
			t.Fatalf("save without the stop-loss box: %d", s)
		}
		if g := ts.call(t, "GET", "/api/v1/brokers/guardrails", key).object(t); g["stopLossRequired"] != false {
			t.Errorf("stopLossRequired after unchecking: %v", g["stopLossRequired"])
		}
	})
}
