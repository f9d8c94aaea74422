package dashboard_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

func TestMain(m *testing.M) {
	code := dbtest.Run(m)
	closeBrowser()
	os.Exit(code)
}

// chromium returns the path of a Chromium or Chrome binary. Without one
// the test is skipped, except under CI (CI set), where .ci/run installs
// Debian's chromium and its absence is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH: .ci/run installs Debian's chromium package")
	}
	t.Skip("no chromium on PATH: install it (Debian: apt-get install chromium) to run the browser tests")
	return ""
}

// refusedPost matches the log entry of a page answered with the status of
// a refused form.
var refusedPost = regexp.MustCompile(`status of (403 \(Forbidden\)|400 \(Bad Request\)|409 \(Conflict\))$`)

// shared is the test binary's headless Chromium, started by the first
// test that needs it and stopped by TestMain. Each test opens a browser
// context of its own in it (its own cookies, storage and tabs, as in a
// fresh browser) in milliseconds, where starting Chromium took a second or
// more of both cores.
var shared struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
}

// sharedBrowser returns the context of the shared Chromium, starting it
// from the binary at path on first use.
func sharedBrowser(path string) (context.Context, error) {
	shared.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1100, 900))
		if os.Geteuid() == 0 {
			opts = append(opts, chromedp.NoSandbox) // Chromium's sandbox refuses to run as root
		}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(actx)
		shared.ctx, shared.cancel = ctx, func() { cancel(); cancelAlloc() }
		// The first Do starts the browser and binds it to ctx, which
		// has no deadline.
		shared.err = chromedp.Do(ctx)
	})
	return shared.ctx, shared.err
}

// closeBrowser stops the shared Chromium if a test started it.
func closeBrowser() {
	if shared.cancel != nil {
		shared.cancel()
	}
}

// browser opens a browser context of the test's own in the shared
// headless Chromium and returns the context of its tab. Page errors
// (uncaught exceptions, console errors, failed loads) are collected and
// fail the test when it ends.
func browser(t *testing.T, path string) context.Context {
	t.Helper()
	root, err := sharedBrowser(path)
	if err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	var mu sync.Mutex
	var errs []string
	err = chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs = append(errs, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				errs = append(errs, "console error")
			}
		case *cdplog.EventEntryAdded:
			// The refused posts' answers (403, 400 with errors beside the
			// fields, 409 for a conflict) are the tests' to check.
			if ev.Entry.Level == cdplog.EntryLevelError && !refusedPost.MatchString(ev.Entry.Text) {
				errs = append(errs, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	})
	if err == nil {
		_, err = chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		mu.Lock()
		defer mu.Unlock()
		for _, e := range errs {
			t.Errorf("page error: %s", e)
		}
	})
	return ctx
}

// run runs browser actions and fails the test on an error; each run has
// a minute.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// into stores an action's value in *v, as a step.
func into[T any](a chromedp.Action[T], v *T) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var err error
		*v, err = a(ctx, t)
		return chromedp.Void{}, err
	}
}

// scripts turns the page's JavaScript on or off.
func scripts(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	})
}

// startServer serves a Server on a loopback socket, with the paper broker
// on, and returns its URL.
func startServer(t *testing.T, db *bun.DB) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	key := make([]byte, 32)
	rand.Read(key)
	base := "http://" + ts.Listener.Addr().String()
	s := server.New(server.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Passwords: testPasswords,
		Brokers: server.BrokersConfig{SecretKey: key, PublicURL: base, SyncInterval: time.Hour}}, db)
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	return base
}

// testPasswords are cheap Argon2id parameters for the tests' password
// hashes and sign-ins, whose cost is not what the tests check.
var testPasswords = billing.PasswordParams{Memory: 64, Time: 1, Threads: 1}

// mustUser stores a pro-plan user with a password, in the account of
// accountOf when that is not nil.
func mustUser(t *testing.T, db bun.IDB, email, password string, admin bool, accountOf *billing.User) billing.User {
	t.Helper()
	ctx := context.Background()
	st := billing.NewStore(db)
	p, err := st.Plan(ctx, "pro")
	if err != nil {
		t.Fatal(err)
	}
	h, err := billing.HashPassword(password, testPasswords)
	if err != nil {
		t.Fatal(err)
	}
	u := billing.User{Email: email, Name: strings.Split(email, "@")[0], PlanID: p.ID, IsAdmin: admin, PasswordHash: &h}
	if accountOf != nil {
		u.AccountID = accountOf.AccountID
	}
	if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
		t.Fatal(err)
	}
	return u
}

// apiStatus is the status of GET /api/v1/billing/plans with the key.
func apiStatus(t *testing.T, base, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/v1/billing/plans", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// signIn signs in through the form and waits for the usage page.
func signIn(t *testing.T, ctx context.Context, base, email, password string) {
	t.Helper()
	run(t, ctx, "sign in as "+email,
		chromedp.Navigate(base+"/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`main form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`meter`)),
	)
}

// TestBrowserKeys drives Settings → API keys in headless Chromium with
// JavaScript off, on both databases: sign in, create a key and see it
// once, use it against the API, delete it and see the API refuse it; a
// form posted from another site is refused; a member who is no
// administrator sees the keys, has no form to create one, and is refused
// when they post one anyway.
func TestBrowserKeys(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	dbtest.EachParallel(t, func(t *testing.T, db *bun.DB) {
		base := startServer(t, db)
		admin := mustUser(t, db, "ada@example.com", "ada's password 1", true, nil)
		mustUser(t, db, "max@example.com", "max's password 1", false, &admin)
		ctx := browser(t, path)
		run(t, ctx, "turn JavaScript off", scripts(false))

		signIn(t, ctx, base, "ada@example.com", "ada's password 1")
		var key, page string
		run(t, ctx, "create a key",
			chromedp.Click(chromedp.CSS(`nav a[href="/dashboard/settings/api-keys"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#name`)),
			chromedp.SendKeys(chromedp.CSS(`#name`), "browser"),
			chromedp.Click(chromedp.CSS(`form[action="/dashboard/settings/api-keys"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`#new-key`)),
			into(chromedp.Text(chromedp.CSS(`#new-key`)), &key),
		)
		if !strings.HasPrefix(key, "tk_") || len(key) != 43 {
			t.Fatalf("the new key %q", key)
		}
		if s := apiStatus(t, base, key); s != http.StatusOK {
			t.Fatalf("the new key against the API: %d", s)
		}
		run(t, ctx, "open the keys page again",
			chromedp.Navigate(base+"/dashboard/settings/api-keys"),
			chromedp.WaitVisible(chromedp.CSS(`#name`)),
			into(chromedp.OuterHTML(chromedp.CSS(`main`)), &page),
		)
		if strings.Contains(page, key) || !strings.Contains(page, key[:11]) {
			t.Errorf("the keys page shows the whole key again, or not its prefix:\n%s", page)
		}
		var notice string
		run(t, ctx, "delete the key",
			chromedp.Click(chromedp.CSS(`button[aria-label="Delete the key browser"]`)),
			chromedp.WaitVisible(chromedp.CSS(`.notice`)),
			into(chromedp.Text(chromedp.CSS(`.notice`)), &notice),
		)
		if !strings.Contains(notice, "Deleted the key") {
			t.Errorf("notice after deleting: %q", notice)
		}
		if s := apiStatus(t, base, key); s != http.StatusUnauthorized {
			t.Errorf("the deleted key against the API: %d, want 401", s)
		}

		// A page on another site posts the dashboard's form without its
		// token: refused, and no key is made.
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><title>evil</title><link rel="icon" href="data:,">
<form method="post" action="%s/dashboard/settings/api-keys"><input name="name" value="evil"><button type="submit">Win a prize</button></form>`, base)
		}))
		defer evil.Close()
		var body string
		run(t, ctx, "post from another site",
			chromedp.Navigate(evil.URL),
			chromedp.Click(chromedp.CSS(`button`)),
			chromedp.WaitVisible(chromedp.CSS(`body`)),
			chromedp.Sleep(200*time.Millisecond),
			into(chromedp.Text(chromedp.CSS(`body`)), &body),
		)
		// 127.0.0.1 on another port is the same site, so the browser sends
		// the session cookie (SameSite=Lax stops it only across sites):
		// the form token is what refuses the post.
		if !strings.Contains(body, "Forbidden: the form's security token is missing") {
			t.Errorf("a cross-site post: %q, want Forbidden", body)
		}
		if keys, _ := billing.NewStore(db).Keys(context.Background(), admin.ID); len(keys) != 1 {
			t.Errorf("%d keys after the cross-site post, want 1 (the deleted one)", len(keys))
		}

		run(t, ctx, "sign out",
			chromedp.Navigate(base+"/dashboard/usage"),
			chromedp.Click(chromedp.CSS(`header form button`)),
			chromedp.WaitVisible(chromedp.CSS(`#email`)),
		)

		signIn(t, ctx, base, "max@example.com", "max's password 1")
		var text string
		var forms int
		run(t, ctx, "a member's keys page",
			chromedp.Navigate(base+"/dashboard/settings/api-keys"),
			chromedp.WaitVisible(chromedp.CSS(`table`)),
			into(chromedp.Text(chromedp.CSS(`main`)), &text),
			into(chromedp.Evaluate[int](`document.querySelectorAll('form[action="/dashboard/settings/api-keys"], button.danger').length`), &forms),
		)
		if forms != 0 || !strings.Contains(text, "Only account administrators") || !strings.Contains(text, "ada@example.com") {
			t.Errorf("a member's keys page: %d forms to create or delete\n%s", forms, text)
		}
		// The member posts a key anyway, with their valid form token.
		var status int
		run(t, ctx, "a member posts a key",
			scripts(true),
			into(chromedp.Evaluate[int](`fetch("/dashboard/settings/api-keys", {method: "POST", body: new URLSearchParams({
				csrf: document.querySelector('input[name=csrf]').value, name: "mine"})}).then(r => r.status)`, chromedp.EvalAwaitPromise), &status),
		)
		if status != http.StatusForbidden {
			t.Errorf("a member's post of a key: %d, want 403", status)
		}
	})
}

// TestScreenshots writes docs/dashboard.md's screenshots of the dashboard to
// the directory TRADEKIT_SCREENSHOTS names, over the demo data set:
//
//	TRADEKIT_SCREENSHOTS=$PWD/docs/screenshots go test ./dashboard -run Screenshots
func TestScreenshots(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("TRADEKIT_SCREENSHOTS")
	if dir == "" {
		t.Skip("TRADEKIT_SCREENSHOTS is not set")
	}
	path := chromium(t)
	db := dbtest.SQLite(t)
	loadDemo(t, db)
	base := startServer(t, db)
	admin := mustUser(t, db, "ada@example.com", "ada's password 1", true, nil)
	mustUser(t, db, "max@example.com", "max's password 1", false, &admin)
	ctx := browser(t, path)
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			png, err := chromedp.FullScreenshot(100)(ctx, t)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
		})
	}
	run(t, ctx, "sign-in", chromedp.Navigate(base+"/dashboard/sign-in"), chromedp.WaitVisible(chromedp.CSS(`#email`)), shot("sign-in"))
	signIn(t, ctx, base, "ada@example.com", "ada's password 1")
	run(t, ctx, "keys",
		chromedp.Navigate(base+"/dashboard/settings/api-keys"),
		chromedp.SendKeys(chromedp.CSS(`#name`), "production server"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/settings/api-keys"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-key`)),
		shot("api-keys"))
	run(t, ctx, "usage", chromedp.Navigate(base+"/dashboard/usage"), chromedp.WaitVisible(chromedp.CSS(`meter`)), shot("usage"))
	run(t, ctx, "members", chromedp.Navigate(base+"/dashboard/settings/members"), chromedp.WaitVisible(chromedp.CSS(`table`)), shot("members"))
	run(t, ctx, "connect the paper broker",
		chromedp.Navigate(base+"/dashboard/brokers"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/brokers"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[value=approve]`)),
		chromedp.Click(chromedp.CSS(`button[value=approve]`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)),
		chromedp.Sleep(time.Second), // the first sync
		chromedp.Navigate(base+"/dashboard/brokers"),
		chromedp.WaitVisible(chromedp.CSS(`table`)),
		shot("brokers"),
		chromedp.Click(chromedp.CSS(`td a`)),
		chromedp.WaitVisible(chromedp.CSS(`h2`)),
		shot("connection"))
	// Two limits that rest and an order too large for the guardrails.
	conns, err := connect.NewStore(db).Connections(context.Background(), admin.ID)
	if err != nil || len(conns) != 1 {
		t.Fatalf("connections: %v, %v", conns, err)
	}
	_, key, err := billing.NewStore(db).CreateKey(context.Background(), admin.ID, "orders", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"HLXI&side=buy&type=limit&quantity=25&limitPrice=80&stopLossPrice=72",
		"BRKN&side=buy&type=limit&quantity=40&limitPrice=39.5", "ORPH&side=buy&type=market&quantity=1000"} {
		symbol, rest, _ := strings.Cut(q, "&")
		apiCall(t, "POST", base+"/api/v1/brokers/orders?connectionId="+conns[0].ID.String()+"&assetId="+marketdata.AssetID(symbol).String()+"&"+rest, key)
	}
	run(t, ctx, "orders", chromedp.Navigate(base+"/dashboard/orders"), chromedp.WaitVisible(chromedp.CSS(`table`)), shot("orders"))
	run(t, ctx, "guardrails", chromedp.Navigate(base+"/dashboard/guardrails"), chromedp.WaitVisible(chromedp.CSS(`#maxDailyTrades`)), shot("guardrails"))
	run(t, ctx, "copy trading",
		chromedp.Navigate(base+"/dashboard/copy-trading"),
		chromedp.Click(chromedp.CSS(`button[aria-label^=Follow]`)),
		chromedp.WaitVisible(chromedp.CSS(`h3`)),
		shot("copy-trading"))
	run(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(base+"/dashboard/settings/api-keys"), chromedp.WaitVisible(chromedp.CSS(`table`)), shot("phone"))
}

// TestBrowserCopyButton checks, with JavaScript on, that a new key's Copy
// button works under the Content-Security-Policy: the layout's script,
// which runs only with the response's nonce, copies the key and says so,
// and the page reports no policy violation (console errors fail the
// test). Headless Chromium grants no clipboard, so a stand-in records
// what is copied.
func TestBrowserCopyButton(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	db := dbtest.SQLite(t)
	base := startServer(t, db)
	mustUser(t, db, "ada@example.com", "ada's password 1", true, nil)
	ctx := browser(t, path)
	signIn(t, ctx, base, "ada@example.com", "ada's password 1")
	var key, copied string
	run(t, ctx, "create a key and copy it",
		chromedp.Navigate(base+"/dashboard/settings/api-keys"),
		chromedp.WaitVisible(chromedp.CSS(`#name`)),
		chromedp.SendKeys(chromedp.CSS(`#name`), "copied"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/settings/api-keys"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-key`)),
		into(chromedp.Text(chromedp.CSS(`#new-key`)), &key),
		chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText = text => { window.copied = text; return Promise.resolve(); }`),
		chromedp.Click(chromedp.CSS(`button[data-copy="new-key"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector('button[data-copy="new-key"]').textContent === "Copied"`,
			chromedp.WithPollingTimeout(10*time.Second)),
		into(chromedp.Evaluate[string](`window.copied`), &copied),
	)
	if !strings.HasPrefix(key, "tk_") || copied != key {
		t.Errorf("copied %q, want the new key %q", copied, key)
	}
}

// apiCall sends an API request with the key and returns its status and
// its data, decoded; the error's instead, for a refusal.
func apiCall(t *testing.T, method, url, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Data, Error map[string]any }
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %v", method, url, res.StatusCode, err)
	}
	if body.Data == nil {
		return res.StatusCode, body.Error
	}
	return res.StatusCode, body.Data
}

// connectPaper connects the paper broker from the brokers page, consents
// on the broker's page and returns the user's connection id.
func connectPaper(t *testing.T, ctx context.Context, db bun.IDB, base string, userID uuid.UUID) string {
	t.Helper()
	run(t, ctx, "connect the paper broker",
		chromedp.Navigate(base+"/dashboard/brokers"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/brokers"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[value=approve]`)),
		chromedp.Click(chromedp.CSS(`button[value=approve]`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)),
	)
	conns, err := connect.NewStore(db).Connections(context.Background(), userID)
	if err != nil || len(conns) != 1 {
		t.Fatalf("connections after connecting: %v, %v", conns, err)
	}
	return conns[0].ID.String()
}

// TestBrowserOrdersAndGuardrails drives the orders and guardrails pages
// in headless Chromium with JavaScript off: a pending order cancelled with
// its button; an order cancelled elsewhere meanwhile, whose button then
// shows why it cannot be cancelled beside the order; a guardrail refused
// beside its field, then the form saved, which the API then reads.
func TestBrowserOrdersAndGuardrails(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	db := dbtest.SQLite(t)
	asset := marketdata.Asset{Symbol: "BRWS", Name: "Browser Test Inc", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"),
		Currency: "USD", IsActive: true}
	md := marketdata.NewStore(db)
	if err := md.SaveAsset(context.Background(), &asset); err != nil {
		t.Fatal(err)
	}
	c := decimal.New(40, 0) // the paper broker trades what has a price
	if err := md.SavePrices(context.Background(), []marketdata.Price{{AssetID: asset.ID, Date: calendar.DateOf(time.Now().UTC()),
		Open: c, High: c, Low: c, Close: c, Volume: 1000}}); err != nil {
		t.Fatal(err)
	}
	base := startServer(t, db)
	ada := mustUser(t, db, "ada@example.com", "ada's password 1", true, nil)
	_, key, err := billing.NewStore(db).CreateKey(context.Background(), ada.ID, "orders", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t, path)
	run(t, ctx, "turn JavaScript off", scripts(false))
	signIn(t, ctx, base, "ada@example.com", "ada's password 1")
	conn := connectPaper(t, ctx, db, base, ada.ID)
	// A limit far below any price rests at the broker.
	place := func(qty string) string {
		t.Helper()
		s, o := apiCall(t, "POST", base+"/api/v1/brokers/orders?connectionId="+conn+"&assetId="+asset.ID.String()+
			"&side=buy&type=limit&quantity="+qty+"&limitPrice=1", key)
		if s != http.StatusOK || o["status"] != "pending" {
			t.Fatalf("place an order: %d %v", s, o)
		}
		return o["id"].(string)
	}

	first := place("2")
	var notice, status string
	run(t, ctx, "cancel a pending order",
		chromedp.Click(chromedp.CSS(`nav a[href="/dashboard/orders"]`)),
		chromedp.Click(chromedp.CSS(`#order-`+first+` button[aria-label="Cancel the order to buy 2 BRWS"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)),
		into(chromedp.Text(chromedp.CSS(`.notice`)), &notice),
		into(chromedp.Text(chromedp.CSS(`#order-`+first+` td[data-label=Status]`)), &status),
	)
	if notice != "Cancelled the order." || status != "cancelled" {
		t.Errorf("after cancelling: notice %q, status %q", notice, status)
	}
	if _, o := apiCall(t, "GET", base+"/api/v1/brokers/orders/"+first, key); o["status"] != "cancelled" {
		t.Errorf("the API after cancelling in the dashboard: %v", o["status"])
	}

	second := place("5")
	var reason string
	run(t, ctx, "open the orders page", chromedp.Navigate(base+"/dashboard/orders"),
		chromedp.WaitVisible(chromedp.CSS(`#order-`+second+` button`)))
	if s, _ := apiCall(t, "DELETE", base+"/api/v1/brokers/orders/"+second, key); s != http.StatusOK {
		t.Fatalf("cancel through the API: %d", s)
	}
	run(t, ctx, "cancel from the stale page",
		chromedp.Click(chromedp.CSS(`#order-`+second+` button`)),
		chromedp.WaitVisible(chromedp.CSS(`#order-`+second+`-error`)),
		into(chromedp.Text(chromedp.CSS(`#order-`+second+`-error`)), &reason),
	)
	if want := "Order " + second + " is cancelled: only a pending order can be cancelled."; reason != want {
		t.Errorf("the error beside the order: %q, want %q", reason, want)
	}

	var msg string
	var invalid chromedp.AttributeResult
	run(t, ctx, "a guardrail out of bounds",
		chromedp.Click(chromedp.CSS(`nav a[href="/dashboard/guardrails"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#maxDailyTrades`)),
		chromedp.Clear(chromedp.CSS(`#maxDailyTrades`)),
		chromedp.SendKeys(chromedp.CSS(`#maxDailyTrades`), "0"),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/guardrails"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#maxDailyTrades-error`)),
		into(chromedp.Text(chromedp.CSS(`#maxDailyTrades-error`)), &msg),
		into(chromedp.AttributeValue(chromedp.CSS(`#maxDailyTrades`), "aria-invalid"), &invalid),
	)
	if msg != `Must be an integer from 1 to 100000, got "0".` || invalid.Value != "true" {
		t.Errorf("the error beside the field: %q, aria-invalid %q", msg, invalid.Value)
	}
	run(t, ctx, "save the guardrails",
		chromedp.Clear(chromedp.CSS(`#maxDailyTrades`)),
		chromedp.SendKeys(chromedp.CSS(`#maxDailyTrades`), "40"),
		chromedp.Click(chromedp.CSS(`input[name=stopLossRequired]`)),
		chromedp.Click(chromedp.CSS(`input[value=crypto]`)),
		chromedp.Click(chromedp.CSS(`form[action="/dashboard/guardrails"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice`)),
	)
	_, g := apiCall(t, "GET", base+"/api/v1/brokers/guardrails", key)
	if g["maxDailyTrades"] != 40.0 || g["stopLossRequired"] != true || fmt.Sprint(g["allowedAssetTypes"]) != "[stock etf fx commodity]" {
		t.Errorf("the API after saving in the dashboard: %v", g)
	}
}
