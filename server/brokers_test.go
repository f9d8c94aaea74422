package server_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/internal/consent"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/server"
)

// appURL is where the tests' client application wants users back.
const appURL = "https://app.example/brokers/done"

// tradingServer is a Server on a real loopback socket, its paper broker
// reached over HTTP at its own public URL.
type tradingServer struct {
	*server.Server
	url   string
	key   []byte
	clock *testkit.Clock // follows the wall clock until set
}

func startTrading(tb testing.TB, db *bun.DB) tradingServer {
	tb.Helper()
	return startTradingWith(tb, db, server.BrokersConfig{SyncInterval: time.Hour})
}

// startTradingWith is startTrading with cfg, whose PublicURL it sets and
// whose SecretKey it makes random when nil.
func startTradingWith(tb testing.TB, db *bun.DB, cfg server.BrokersConfig) tradingServer {
	tb.Helper()
	ts := httptest.NewUnstartedServer(nil)
	if cfg.SecretKey == nil {
		cfg.SecretKey = make([]byte, 32)
		rand.Read(cfg.SecretKey)
	}
	c := &testkit.Clock{}
	cfg.PublicURL = "http://" + ts.Listener.Addr().String()
	s := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Now: c.Now, Brokers: cfg}, db)
	ts.Config.Handler = s.Handler()
	ts.Start()
	tb.Cleanup(func() {
		s.Connections().Wait()
		ts.Close()
	})
	return tradingServer{Server: s, url: cfg.PublicURL, key: cfg.SecretKey, clock: c}
}

func (ts tradingServer) call(tb testing.TB, method, path, key string) response {
	tb.Helper()
	req, _ := http.NewRequest(method, ts.url+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	checkExchange(tb, req, res.StatusCode, res.Header, b)
	r := response{status: res.StatusCode, header: res.Header, raw: string(b)}
	if err := json.Unmarshal(b, &r.body); err != nil {
		tb.Fatalf("%s %s: %d, not JSON: %s", method, path, res.StatusCode, b)
	}
	return r
}

// browser follows redirects like a browser, with cookies, and stops at
// the client application.
func browser() *http.Client { return consent.Browser("app.example", nil) }

// decide opens the authorization URL in the browser, submits the consent
// form with the button whose value holds choice, and returns where the
// browser ended (the client application's URL with the outcome) and the
// callback's URL.
func decide(tb testing.TB, b *http.Client, authURL, choice string) (to, callback *url.URL) {
	tb.Helper()
	to, callback, err := consent.Decide(context.Background(), b, authURL, choice)
	if err != nil {
		tb.Fatal(err)
	}
	return to, callback
}

// connectPaper runs the whole flow for the key's user and returns the
// active connection's id.
func connectPaper(tb testing.TB, ts tradingServer, key string) string {
	tb.Helper()
	created := ts.call(tb, "POST", "/api/v1/brokers/connections?"+query("provider", "paper", "redirectUrl", appURL), key)
	if created.status != 200 {
		tb.Fatalf("create: %d %s", created.status, created.raw)
	}
	c := created.object(tb)
	to, _ := decide(tb, browser(), c["authorizationUrl"].(string), "approve")
	if to.Query().Get("status") != "active" || to.Query().Get("connectionId") != c["id"] {
		tb.Fatalf("back at the app with %s", to)
	}
	return c["id"].(string)
}

func TestBrokerConnectionFlow(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		ts := startTrading(t, db)
		key := mustKey(t, db, "trader@example.com", "pro")
		start := time.Now()

		created := ts.call(t, "POST", "/api/v1/brokers/connections?"+query("provider", "paper", "redirectUrl", appURL), key).object(t)
		if created["status"] != "pending" || created["provider"] != "paper" {
			t.Fatalf("created %v", created)
		}
		auth, _ := url.Parse(created["authorizationUrl"].(string))
		if auth.Path != "/paper/oauth/authorize" || len(auth.Query().Get("state")) < 22 || auth.Query().Get("code_challenge") == "" {
			t.Errorf("authorizationUrl %s", auth)
		}
		id := created["id"].(string)
		to, _ := decide(t, browser(), auth.String(), "approve")
		if to.Query().Get("status") != "active" || to.Query().Get("connectionId") != id || to.Path != "/brokers/done" {
			t.Fatalf("back at %s", to)
		}
		list := ts.call(t, "GET", "/api/v1/brokers/connections", key).list(t)
		// The first sync starts on activation, in the background: it may
		// have finished already (lastSyncAt set) or not (null).
		if len(list) != 1 || list[0]["status"] != "active" || list[0]["accountName"] == nil {
			t.Fatalf("connections %v", list)
		}
		t.Logf("create → consent → callback → active: %v", time.Since(start))

		// Connecting started the first sync; once it is done, the paper
		// account buys 10 ACME, then a sync pulls it in.
		ts.Connections().Wait()
		c, err := connect.NewStore(db).Connection(context.Background(), userID(t, db, "trader@example.com"), uuid.MustParse(id))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.Paper().Fill(context.Background(), c.AccountID, "ACME", brokers.Buy,
			decimal.RequireFromString("10"), decimal.RequireFromString("100.25"), time.Now()); err != nil {
			t.Fatal(err)
		}
		syncStart := time.Now()
		sync := ts.call(t, "POST", "/api/v1/brokers/connections/"+id+"/sync", key).object(t)
		if sync["syncStatus"] != "syncing" || sync["id"] != id || sync["startedAt"] == nil {
			t.Fatalf("sync %v", sync)
		}
		ts.Connections().Wait()
		logs := ts.call(t, "GET", "/api/v1/brokers/connections/"+id+"/logs", key).list(t)
		if len(logs) != 2 || logs[0]["status"] != "completed" || logs[0]["positionsSynced"] != 1.0 || logs[0]["completedAt"] == nil ||
			logs[1]["positionsSynced"] != 0.0 {
			t.Fatalf("logs %v", logs)
		}
		t.Logf("sync: %v; whole flow %v", time.Since(syncStart), time.Since(start))

		pfs := ts.call(t, "GET", "/api/v1/portfolios", key)
		if len(pfs.list(t)) != 1 {
			t.Fatalf("portfolios %s", pfs.raw)
		}
		pid := pfs.list(t)[0]["id"].(string)
		pf := ts.call(t, "GET", "/api/v1/portfolios/"+pid, key)
		// ACME's latest stored close is 12345.678901 (2024-01-04): 10 of
		// them are worth 123456.78901, bought for 1002.5; cash is 100000
		// less the 1002.5 paid.
		for _, want := range []string{`"connectionId":"` + id + `"`, `"currency":"USD"`, `"cash":98997.5`,
			`"symbol":"ACME","assetId":"` + mdIDs.acme.String() + `","quantity":10,"averageCost":100.25,"price":12345.678901,"priceDate":"2024-01-04","marketValue":123456.78901,"unrealizedPnl":122454.28901`,
			`"equity":222454.28901`} {
			if !strings.Contains(pf.raw, want) {
				t.Errorf("portfolio lacks %s:\n%s", want, pf.raw)
			}
		}
		if h := ts.call(t, "GET", "/api/v1/portfolios/"+pid+"/history", key).list(t); len(h) == 0 || h[len(h)-1]["date"] != time.Now().UTC().Format("2006-01-02") {
			t.Errorf("history %v", h)
		}
		if got := ts.call(t, "GET", "/api/v1/brokers/connections", key).list(t)[0]; got["lastSyncAt"] == nil || got["syncStatus"] != "completed" {
			t.Errorf("after the sync: %v", got)
		}

		// Another sync reads the fills again from a month before the last
		// one, and keeps each once.
		ts.call(t, "POST", "/api/v1/brokers/connections/"+id+"/sync", key)
		ts.Connections().Wait()
		if l := ts.call(t, "GET", "/api/v1/brokers/connections/"+id+"/logs", key).list(t); len(l) != 3 || l[0]["status"] != "completed" {
			t.Fatalf("logs after the second sync: %v", l)
		}
		if n, err := db.NewSelect().Table("portfolio_fills").Count(context.Background()); err != nil || n != 1 {
			t.Errorf("%d fills stored, %v; want 1", n, err)
		}

		mustHoldNoPlaintextToken(t, db, ts.key, c)

		// Disconnecting revokes and forgets the tokens and keeps the row.
		del := ts.call(t, "DELETE", "/api/v1/brokers/connections/"+id, key).object(t)
		if del["status"] != "disconnected" {
			t.Fatalf("delete %v", del)
		}
		after, _ := connect.NewStore(db).Connection(context.Background(), c.UserID, c.ID)
		if after.AccessToken != nil || after.RefreshToken != nil || after.Status != "disconnected" {
			t.Errorf("after disconnecting: %+v", after)
		}
		if r := ts.call(t, "POST", "/api/v1/brokers/connections/"+id+"/sync", key); r.status != 409 || r.errorCode() != "CONFLICT" {
			t.Errorf("syncing a disconnected connection: %d %s", r.status, r.raw)
		}
		if len(ts.call(t, "GET", "/api/v1/portfolios", key).list(t)) != 1 {
			t.Error("the portfolio went with the connection")
		}
	})
}

// userID returns the id of the user with the email.
func userID(tb testing.TB, db *bun.DB, email string) uuid.UUID {
	tb.Helper()
	u, err := billing.NewStore(db).UserByEmail(context.Background(), email)
	if err != nil {
		tb.Fatal(err)
	}
	return u.ID
}

// mustHoldNoPlaintextToken opens c's sealed tokens with the server's key
// and fails if any text column of any table holds one of them.
func mustHoldNoPlaintextToken(tb testing.TB, db *bun.DB, key []byte, c connect.Connection) {
	tb.Helper()
	sealer, _ := connect.NewSealer(key)
	var secrets []string
	for kind, v := range map[string]*string{"access": c.AccessToken, "refresh": c.RefreshToken} {
		if v == nil {
			tb.Fatalf("no %s token stored", kind)
		}
		plain, err := sealer.Open(*v, kind+":"+c.ID.String())
		if err != nil || len(plain) < 16 {
			tb.Fatalf("%s token: %q, %v", kind, plain, err)
		}
		secrets = append(secrets, plain)
	}
	ctx := context.Background()
	for _, table := range []string{"broker_connections", "broker_oauth_states", "broker_sync_logs", "paper_accounts", "paper_tokens", "paper_grants"} {
		rows, err := db.QueryContext(ctx, "SELECT * FROM "+table)
		if err != nil {
			tb.Logf("%s: %v", table, err)
			continue
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				tb.Fatal(err)
			}
			for i, v := range vals {
				s := fmt.Sprint(v)
				if b, ok := v.([]byte); ok {
					s = string(b)
				}
				for _, secret := range secrets {
					if strings.Contains(s, secret) {
						tb.Errorf("%s.%s holds a token in plaintext", table, cols[i])
					}
				}
			}
		}
		rows.Close()
	}
}

func TestBrokerConnectionErrors(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		ts := startTrading(t, db)
		alice := mustKey(t, db, "alice@example.com", "free") // 1 portfolio
		bob := mustKey(t, db, "bob@example.com", "pro")
		create := func(key string, kv ...string) response {
			return ts.call(t, "POST", "/api/v1/brokers/connections?"+query(kv...), key)
		}
		for _, c := range []struct {
			kv    []string
			field string
		}{
			{[]string{"redirectUrl", appURL}, "provider"},
			{[]string{"provider", "etrade", "redirectUrl", appURL}, "provider"},
			{[]string{"provider", "alpaca", "redirectUrl", appURL}, "provider"},
			{[]string{"provider", "paper"}, "redirectUrl"},
			{[]string{"provider", "paper", "redirectUrl", "/relative"}, "redirectUrl"},
			{[]string{"provider", "paper", "redirectUrl", "ftp://app.example/x"}, "redirectUrl"},
			{[]string{"provider", "paper", "redirectUrl", "javascript:alert(1)"}, "redirectUrl"},
			{[]string{"provider", "paper", "redirectUrl", "https://user:pw@app.example/"}, "redirectUrl"},
		} {
			wantInvalid(t, fmt.Sprint(c.kv), create(alice, c.kv...), c.field)
		}
		if r := create(alice, "provider", "alpaca", "redirectUrl", appURL); !strings.Contains(r.errorMessage(), "TRADEKIT_ALPACA_CLIENT_ID") {
			t.Errorf("alpaca unconfigured: %s", r.raw)
		}
		providers := ts.call(t, "GET", "/api/v1/brokers/providers", alice).list(t)
		if len(providers) != 2 || providers[0]["provider"] != "paper" || providers[0]["available"] != true || providers[1]["available"] != false {
			t.Errorf("providers %v", providers)
		}

		// Denied at the broker: back at the app with error, still pending.
		denied := create(alice, "provider", "paper", "redirectUrl", appURL).object(t)
		to, _ := decide(t, browser(), denied["authorizationUrl"].(string), "deny")
		if to.Query().Get("error") == "" || to.Query().Get("status") != "pending" {
			t.Errorf("denied: back at %s", to)
		}

		// Expired state: the user took 11 minutes.
		slow := create(alice, "provider", "paper", "redirectUrl", appURL).object(t)
		ts.clock.Set(time.Now().Add(11 * time.Minute))
		to, _ = decide(t, browser(), slow["authorizationUrl"].(string), "approve")
		ts.clock.Set(time.Time{})
		if !strings.Contains(to.Query().Get("error"), "longer than") || to.Query().Get("status") != "pending" {
			t.Errorf("expired state: back at %s", to)
		}

		// Success, then a replay of the callback changes nothing.
		ok := create(alice, "provider", "paper", "redirectUrl", appURL).object(t)
		to, callback := decide(t, browser(), ok["authorizationUrl"].(string), "approve")
		if to.Query().Get("status") != "active" {
			t.Fatalf("back at %s", to)
		}
		res, err := http.Get(callback.String())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("replayed callback: %d", res.StatusCode)
		}
		for _, q := range []string{"", "state=nope&code=x"} {
			if r := ts.call(t, "GET", "/api/v1/brokers/oauth/callback?"+q, ""); r.status != 400 && r.status != 404 {
				t.Errorf("callback ?%s: %d %s", q, r.status, r.raw)
			}
		}
		byStatus := map[string]int{}
		for _, c := range ts.call(t, "GET", "/api/v1/brokers/connections", alice).list(t) {
			byStatus[c["status"].(string)]++
			if c["status"] == "pending" && c["error"] == nil {
				t.Errorf("a failed authorization left no trace: %v", c)
			}
		}
		if byStatus["active"] != 1 || byStatus["pending"] != 2 {
			t.Errorf("connections by status %v", byStatus)
		}

		// The free plan's one portfolio is taken.
		r := create(alice, "provider", "paper", "redirectUrl", appURL)
		if e, _ := r.body["error"].(map[string]any); r.status != 403 || r.errorCode() != "FORBIDDEN" || e["details"].(map[string]any)["limit"] != "portfolios" {
			t.Errorf("over the portfolio limit: %d %s", r.status, r.raw)
		}
		if want := "your plan allows 1 portfolio and each connected account is one"; !strings.HasPrefix(r.errorMessage(), want) {
			t.Errorf("over the portfolio limit: %q, want it to start with %q", r.errorMessage(), want)
		}

		// Another user's connection and portfolio are not found.
		id := ok["id"].(string)
		ts.call(t, "POST", "/api/v1/brokers/connections/"+id+"/sync", alice)
		ts.Connections().Wait()
		pid := ts.call(t, "GET", "/api/v1/portfolios", alice).list(t)[0]["id"].(string)
		for _, c := range []struct{ method, path string }{
			{"DELETE", "/api/v1/brokers/connections/" + id},
			{"POST", "/api/v1/brokers/connections/" + id + "/sync"},
			{"GET", "/api/v1/brokers/connections/" + id + "/logs"},
			{"GET", "/api/v1/portfolios/" + pid},
			{"GET", "/api/v1/portfolios/" + pid + "/history"},
		} {
			if r := ts.call(t, c.method, c.path, bob); r.status != 404 || r.errorCode() != "NOT_FOUND" {
				t.Errorf("bob: %s %s: %d %s", c.method, c.path, r.status, r.raw)
			}
		}
		if l := ts.call(t, "GET", "/api/v1/brokers/connections", bob).list(t); len(l) != 0 {
			t.Errorf("bob sees %v", l)
		}
		if r := ts.call(t, "POST", "/api/v1/brokers/connections/"+denied["id"].(string)+"/sync", alice); r.status != 409 {
			t.Errorf("syncing a pending connection: %d %s", r.status, r.raw)
		}
	})
}

// TestBrokerConnectionsNeedSecretKey checks that a server without a key
// refuses connections, saying what to set.
func TestBrokerConnectionsNeedSecretKey(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Brokers: server.BrokersConfig{PublicURL: "http://127.0.0.1:1"}}, db).Handler()
	key := mustKey(t, db, "nokey@example.com", "pro")
	r := send(t, h, "POST", "/api/v1/brokers/connections?"+query("provider", "paper", "redirectUrl", appURL), key)
	if r.status != 503 || !strings.Contains(r.errorMessage(), "TRADEKIT_SECRET_KEY") {
		t.Errorf("%d %s", r.status, r.raw)
	}
	// The providers list agrees with that 503: nothing is available, and
	// each says why, with the 503's words (issue 40, point 9).
	want := []map[string]any{
		{"provider": "paper", "name": "Tradekit paper broker (built in)", "available": false,
			"configure": r.errorMessage()},
		{"provider": "alpaca", "name": "Alpaca", "available": false,
			"configure": r.errorMessage() + "; and " + alpacaHow},
	}
	var got []map[string]any
	for _, p := range send(t, h, "GET", "/api/v1/brokers/providers", key).body["data"].([]any) {
		got = append(got, p.(map[string]any))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers without a secret key (-want +got):\n%s", diff)
	}
}

// alpacaHow is what the providers list says makes alpaca available.
const alpacaHow = "set TRADEKIT_ALPACA_CLIENT_ID and TRADEKIT_ALPACA_CLIENT_SECRET (an OAuth app registered at Alpaca " +
	"with this server's callback URL)"

// TestBrokerSyncSchedule checks the scheduled syncs, the refresh of an
// expired access token during one, and the failing of a sync orphaned by
// a stopped instance.
func TestBrokerSyncSchedule(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		ts := startTrading(t, db)
		key := mustKey(t, db, "schedule@example.com", "pro")
		id := connectPaper(t, ts, key)
		ctx := context.Background()
		logs := func() []map[string]any {
			ts.Connections().Wait()
			return ts.call(t, "GET", "/api/v1/brokers/connections/"+id+"/logs", key).list(t)
		}
		before, _ := connect.NewStore(db).Connection(ctx, userID(t, db, "schedule@example.com"), uuid.MustParse(id))

		// Never synced: the first tick syncs it.
		if err := ts.Connections().Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if l := logs(); len(l) != 1 || l[0]["status"] != "completed" {
			t.Fatalf("after the first tick: %v", l)
		}
		// Synced just now: the next tick leaves it.
		ts.Connections().Tick(ctx)
		if l := logs(); len(l) != 1 {
			t.Fatalf("a tick synced a fresh connection: %v", l)
		}
		// Two hours on, the access token (1 h) has expired at the broker
		// and the connection is due: the sync refreshes the token, stores
		// it sealed, and completes.
		ts.clock.Set(time.Now().Add(2 * time.Hour))
		defer ts.clock.Set(time.Time{})
		ts.Connections().Tick(ctx)
		if l := logs(); len(l) != 2 || l[0]["status"] != "completed" {
			t.Fatalf("after two hours: %v", l)
		}
		after, _ := connect.NewStore(db).Connection(ctx, before.UserID, before.ID)
		sealer, _ := connect.NewSealer(ts.key)
		oldToken, _ := sealer.Open(*before.AccessToken, "access:"+id)
		newToken, err := sealer.Open(*after.AccessToken, "access:"+id)
		if err != nil || newToken == oldToken || *after.RefreshToken == *before.RefreshToken {
			t.Errorf("the tokens were not refreshed and stored: %v", err)
		}

		// A sync whose instance stopped stays syncing; after the timeout
		// a tick fails it, and the connection syncs again.
		orphan := uuid.New()
		started := ts.clock.Now().Add(-3 * time.Minute)
		if _, err := db.NewInsert().Model(&connect.SyncLog{ID: orphan, ConnectionID: before.ID, Status: "syncing", StartedAt: started}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Table("broker_connections").Set("sync_status = 'syncing', sync_id = ?, sync_started_at = ?", orphan, started).
			Where("id = ?", before.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		ts.clock.Set(ts.clock.Now().Add(61 * time.Minute)) // due again
		if err := ts.Connections().Tick(ctx); err != nil {
			t.Fatal(err)
		}
		l := logs()
		var failed, completed int
		for _, e := range l {
			switch {
			case e["syncId"] == orphan.String() && e["status"] == "failed" && strings.Contains(fmt.Sprint(e["error"]), "interrupted"):
				failed++
			case e["status"] == "completed":
				completed++
			}
		}
		if failed != 1 || completed != 3 {
			t.Errorf("after the orphan's tick: %v", l)
		}
	})
}
