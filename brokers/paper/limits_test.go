package paper_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
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
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
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
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
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
		e := mustEnv(t, db, paper.Config{MaxOpenOrders: max}, portal.Config{AccessTTL: 72 * time.Hour})
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

// TestRateLimit checks the limit of DefaultRateLimit (200) requests a
// UTC minute per account, Alpaca's: each answer carries
// X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset; the
// 201st, on any route and through any Broker on the database, answers
// 429 {"code":42910000,"message":"rate limit exceeded"} with Retry-After,
// and Alpaca's SDK gives up on it with that code after its retries;
// another account is not affected, an invalid token still answers 401,
// and the next minute starts afresh.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100.5"})
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
		e.clock.Set(t0.Add(10 * time.Second))
		alice, _ := e.connect(t) // one request, GET /v2/account
		bob, _ := e.connect(t)
		reset := strconv.FormatInt(t0.Add(time.Minute).Unix(), 10)
		for i := 2; i <= paper.DefaultRateLimit; i++ {
			resp, body := e.call(t, http.MethodGet, alice.AccessToken, "/v2/clock", "")
			h := resp.Header
			if resp.StatusCode != http.StatusOK || h.Get("X-RateLimit-Limit") != "200" ||
				h.Get("X-RateLimit-Remaining") != strconv.Itoa(paper.DefaultRateLimit-i) || h.Get("X-RateLimit-Reset") != reset {
				t.Fatalf("request %d: %d, limit %q, remaining %q, reset %q, want 200, 200, %d, %s\n%s", i, resp.StatusCode,
					h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), paper.DefaultRateLimit-i, reset, body)
			}
		}
		const limited = `{"code":42910000,"message":"rate limit exceeded"}`
		order := `{"symbol":"ACME","qty":"1","side":"buy","type":"limit","limit_price":"1","time_in_force":"gtc"}`
		e2 := mustEnv(t, db, paper.Config{}) // another Broker on the database
		e2.clock.Set(e.clock.Now())
		for _, c := range []struct {
			e                  *env
			method, path, body string
		}{{e, http.MethodGet, "/v2/account", ""}, {e, http.MethodPost, "/v2/orders", order}, {e2, http.MethodGet, "/v2/account", ""}} {
			resp, body := c.e.call(t, c.method, alice.AccessToken, c.path, c.body)
			if resp.StatusCode != http.StatusTooManyRequests || body != limited || resp.Header.Get("X-RateLimit-Remaining") != "0" ||
				resp.Header.Get("X-RateLimit-Reset") != reset || resp.Header.Get("Retry-After") != "50" {
				t.Errorf("%s %s over the limit: %d %s, remaining %q, reset %q, Retry-After %q; want 429 %s, 0, %s, 50",
					c.method, c.path, resp.StatusCode, body, resp.Header.Get("X-RateLimit-Remaining"),
					resp.Header.Get("X-RateLimit-Reset"), resp.Header.Get("Retry-After"), limited, reset)
			}
		}
		if n := count(t, db, "paper_orders"); n != 0 {
			t.Errorf("%d orders stored over the limit, want none", n)
		}
		c := sdk.NewClient(sdk.ClientOpts{OAuth: alice.AccessToken, BaseURL: e.srv.URL + "/paper", HTTPClient: e.srv.Client(),
			RetryLimit: 1, RetryDelay: time.Millisecond})
		var ae *sdk.APIError
		if _, err := c.GetAccount(); !errors.As(err, &ae) || ae.StatusCode != http.StatusTooManyRequests || ae.Code != 42910000 {
			t.Errorf("the SDK's GetAccount over the limit: %v, want its APIError 429 42910000", err)
		}
		if resp, body := e.call(t, http.MethodGet, bob.AccessToken, "/v2/account", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("bob's request: %d %s", resp.StatusCode, body)
		}
		e.revoke(t, alice.AccessToken)
		if resp, body := e.call(t, http.MethodPost, alice.AccessToken, "/v2/orders", order); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("an order with the revoked token over the limit: %d %s, want 401", resp.StatusCode, body)
		}
		e.clock.Set(t0.Add(time.Minute))
		if resp, body := e.call(t, http.MethodGet, bob.AccessToken, "/v2/account", ""); resp.StatusCode != http.StatusOK ||
			resp.Header.Get("X-RateLimit-Remaining") != "199" {
			t.Errorf("the next minute: %d, remaining %q\n%s", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"), body)
		}
	})
}

// TestRateLimitOff checks that a negative Config.RateLimit turns the
// limit off, and that a Config.RateLimit is the limit.
func TestRateLimitOff(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		off := mustEnv(t, db, paper.Config{RateLimit: -1})
		tok, _ := off.connect(t)
		for i := range 3 {
			if resp, _ := off.call(t, http.MethodGet, tok.AccessToken, "/v2/clock", ""); resp.StatusCode != http.StatusOK ||
				resp.Header.Get("X-RateLimit-Limit") != "" {
				t.Fatalf("request %d without a limit: %d, X-RateLimit-Limit %q", i, resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"))
			}
		}
		two := mustEnv(t, db, paper.Config{RateLimit: 2})
		tok, _ = two.connect(t)
		if resp, _ := two.call(t, http.MethodGet, tok.AccessToken, "/v2/clock", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("request 2 of 2: %d", resp.StatusCode)
		}
		if resp, _ := two.call(t, http.MethodGet, tok.AccessToken, "/v2/clock", ""); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("request 3 of 2: %d, want 429", resp.StatusCode)
		}
	})
}

// TestMaxStreams checks that one access token or API key holds at most
// DefaultMaxStreams (10) trade-update streams at once: the 11th answers
// 429 while 10 are open, another credential of the same account is not
// affected, and a closed stream frees its slot.
func TestMaxStreams(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
		tok, accountID := e.connect(t)
		k, secret, err := e.b.CreateAPIKey(context.Background(), uuid.MustParse(accountID), "k")
		if err != nil {
			t.Fatal(err)
		}
		open := func(headers map[string]string) *http.Response {
			t.Helper()
			req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/paper/v2/events/trades", nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		bearer := map[string]string{"Authorization": "Bearer " + tok.AccessToken}
		var streams []*http.Response
		for i := range paper.DefaultMaxStreams {
			resp := open(bearer)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("stream %d: %s", i+1, resp.Status)
			}
			streams = append(streams, resp)
		}
		defer func() {
			for _, s := range streams {
				s.Body.Close()
			}
		}()
		resp := open(bearer)
		body := strings.TrimSpace(readBody(t, resp))
		want := `{"code":42910000,"message":"too many trade-update streams: at most 10 at once per API key or access token"}`
		if resp.StatusCode != http.StatusTooManyRequests || body != want {
			t.Errorf("stream 11: %d %s, want 429 %s", resp.StatusCode, body, want)
		}
		keyed := open(map[string]string{"APCA-API-KEY-ID": k.ID, "APCA-API-SECRET-KEY": secret})
		if keyed.StatusCode != http.StatusOK {
			t.Errorf("a stream with the account's API key: %s", keyed.Status)
		}
		keyed.Body.Close()
		streams[0].Body.Close()
		streams = streams[1:]
		// The server sees the client go when its next write fails: wait
		// for the slot, at most a few keep-alives of the default.
		testkit.Eventually(t, 5*time.Second, func() error {
			resp := open(bearer)
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				return fmt.Errorf("%s, want 200", resp.Status)
			}
			if _, err := bufio.NewReader(resp.Body).Peek(0); err != nil {
				t.Error(err)
			}
			streams = append(streams, resp)
			return nil
		}, "a stream after one closed")
	})
}

// TestSignInLinkBoundToBrowser checks that a link of Broker.SignInLink
// works only in the browser it was made for, the one that got its
// cookie: an attacker's link opened by someone else answers 403, signs
// them in to nothing and stays usable; in the browser with the cookie it
// signs in, once.
func TestSignInLinkBoundToBrowser(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
		_, attackerAccount := e.connect(t)
		// The attacker's browser asks for a link, as the dashboard's
		// button does for it.
		rec := httptest.NewRecorder()
		link, _, err := e.p.SignInLink(rec, httptest.NewRequest(http.MethodPost, e.srv.URL+"/dashboard", nil), uuid.MustParse(attackerAccount))
		if err != nil {
			t.Fatal(err)
		}
		cookies := rec.Result().Cookies()
		if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].Path != "/paper/account/sign-in" {
			t.Fatalf("SignInLink's cookies: %+v, want one HttpOnly cookie for /paper/account/sign-in", cookies)
		}

		victim := e.browser(t)
		resp, page := victim.get(e.srv.URL + link)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(page, "made for another browser") {
			t.Errorf("the attacker's link in the victim's browser: %s, want 403\n%s", resp.Status, page)
		}
		if resp, _ := victim.get(e.srv.URL + "/paper/account"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the victim's account page after the link: %s, want 401 (signed in to nothing)", resp.Status)
		}
		forged := e.browser(t)
		u, _ := url.Parse(e.srv.URL + "/paper/account/sign-in")
		forged.c.Jar.SetCookies(u, []*http.Cookie{{Name: cookies[0].Name, Value: strings.Repeat("A", len(cookies[0].Value)), Path: "/paper/account/sign-in"}})
		if resp, _ := forged.get(e.srv.URL + link); resp.StatusCode != http.StatusForbidden {
			t.Errorf("the link with another cookie: %s, want 403", resp.Status)
		}

		attacker := e.browser(t)
		attacker.c.Jar.SetCookies(u, cookies)
		resp, _ = attacker.get(e.srv.URL + link)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/paper/account" {
			t.Fatalf("the link in its own browser: %s to %q, want 303 to /paper/account", resp.Status, resp.Header.Get("Location"))
		}
		if resp, _ := attacker.get(e.srv.URL + link); resp.StatusCode != http.StatusForbidden {
			t.Errorf("the link used a second time: %s, want 403", resp.Status)
		}
	})
}
