package paper_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// signInLink asks for a sign-in link to the account page with the access
// token and returns the answer's status and link.
func (e *env) signInLink(t *testing.T, accessToken string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/paper/account/sign-in-links", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+accessToken)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusCreated {
		return resp.StatusCode, body
	}
	var got struct {
		URL       string    `json:"url"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("sign-in link: %v\n%s", err, body)
	}
	if !got.ExpiresAt.Equal(e.clock.Now().Add(portal.SignInLinkTTL)) || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("sign-in link: expires_at %s, Cache-Control %q", got.ExpiresAt, resp.Header.Get("Cache-Control"))
	}
	return resp.StatusCode, got.URL
}

// signIn uses a sign-in link in a new browser and checks that it lands on
// the account page.
func (e *env) signIn(t *testing.T, link string) *browser {
	t.Helper()
	br := e.browser(t)
	resp, body := br.get(e.srv.URL + link)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/paper/account" {
		t.Fatalf("GET the sign-in link: %s to %q, want 303 to /paper/account\n%s", resp.Status, resp.Header.Get("Location"), body)
	}
	return br
}

// accountForms returns the forms of the account page, by action.
func accountForms(t *testing.T, page string) map[string]htmlForm {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	forms := map[string]htmlForm{}
	var f *htmlForm
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return forms
		}
		if err != nil {
			t.Fatalf("parse the page: %v\n%s", err, page)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch {
			case el.Name.Local == "form":
				f = &htmlForm{Action: attr["action"], Method: attr["method"], Fields: url.Values{}}
			case el.Name.Local == "input" && f != nil && attr["type"] == "hidden":
				f.Fields.Add(attr["name"], attr["value"])
			}
		case xml.EndElement:
			if el.Name.Local == "form" && f != nil {
				key := f.Action
				if id := f.Fields.Get("key_id"); id != "" {
					key += " " + id
				}
				forms[key] = *f
				f = nil
			}
		}
	}
}

// newKeyPattern finds the new key's id and secret on the account page.
var newKeyPattern = regexp.MustCompile(`<dt>Key ID</dt>\s*<dd><code>([^<]+)</code></dd>\s*<dt>Secret key</dt>\s*<dd><code>([^<]+)</code></dd>`)

// createKey creates a key named name on the account page open in br and
// returns its id and secret.
func (e *env) createKey(t *testing.T, br *browser, name string) (string, string) {
	t.Helper()
	_, page := br.get(e.srv.URL + "/paper/account")
	f := accountForms(t, page)["/paper/account/keys"]
	f.Fields.Set("name", name)
	resp, page := br.post(e.srv.URL+f.Action, f.Fields)
	m := newKeyPattern.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("create a key: %s\n%s", resp.Status, page)
	}
	return m[1], m[2]
}

// keyClient returns the official SDK's client with an API key, as a
// program given a key id and a secret uses it.
func (e *env) keyClient(id, secret string) *sdk.Client {
	return sdk.NewClient(sdk.ClientOpts{APIKey: id, APISecret: secret, BaseURL: e.srv.URL + "/paper", HTTPClient: e.srv.Client(), RetryLimit: 1})
}

// rawGet calls GET /paper/v2/account with the headers and returns the
// status and the body.
func (e *env) rawGet(t *testing.T, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/paper/v2/account", nil)
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
	return resp.StatusCode, readBody(t, resp)
}

// unauthorizedBody is Alpaca's body of a 401, to the byte.
const unauthorizedBody = `{"code":40110000,"message":"request is not authorized"}`

// TestAPIKeys checks API keys end to end: the holder signs in to the
// account page through a link the connected app asks for, creates a key
// (its secret shown once, stored only as its SHA-256), and Alpaca's
// official SDK, configured with the key id and secret, trades the account
// (account, orders, positions); a wrong, unknown or revoked key answers
// Alpaca's 401.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100", "2026-03-02": "102"})
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
		tok, accountID := e.connect(t)

		status, link := e.signInLink(t, tok.AccessToken)
		if status != http.StatusCreated || !strings.HasPrefix(link, "/paper/account/sign-in?token=") {
			t.Fatalf("sign-in link: %d %s", status, link)
		}
		br := e.signIn(t, link)
		if resp, page := br.get(e.srv.URL + "/paper/account"); resp.StatusCode != http.StatusOK ||
			!strings.Contains(page, "This account has no API keys.") || !strings.Contains(page, "<code>/paper</code>") {
			t.Fatalf("the account page: %s\n%s", resp.Status, page)
		}
		// A link works once.
		if resp, _ := e.browser(t).get(e.srv.URL + link); resp.StatusCode != http.StatusForbidden {
			t.Errorf("a sign-in link used again: %s, want 403", resp.Status)
		}

		id, secret := e.createKey(t, br, "my bot")
		if !regexp.MustCompile(`^PK[A-Z2-7]{18}$`).MatchString(id) || len(secret) != 40 {
			t.Errorf("key %q, secret %q: want PK and 18 characters, and 40 characters", id, secret)
		}
		// The page shows the secret once: reloaded, it lists the key
		// without it.
		if _, page := br.get(e.srv.URL + "/paper/account"); !strings.Contains(page, id) || !strings.Contains(page, "my bot") || strings.Contains(page, secret) {
			t.Errorf("the account page after the key was created shows the secret, or not the key:\n%s", page)
		}
		// Only the secret's SHA-256 is stored.
		var row struct {
			KeyID      string `bun:"key_id"`
			SecretHash string `bun:"secret_hash"`
			Name       string `bun:"name"`
		}
		if err := db.NewSelect().Table("paper_api_keys").Column("key_id", "secret_hash", "name").Scan(context.Background(), &row); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(secret))
		if row.KeyID != id || row.SecretHash != hex.EncodeToString(sum[:]) || row.Name != "my bot" {
			t.Errorf("the stored key: %+v", row)
		}

		// The official SDK with the key: account, orders, positions.
		c := e.keyClient(id, secret)
		acct, err := c.GetAccount()
		if err != nil || acct.ID != accountID || !acct.Cash.Equal(d("100000")) {
			t.Fatalf("GetAccount with the key: %+v, %v", acct, err)
		}
		buy, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("10"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.Day, ClientOrderID: "key-buy"})
		if err != nil {
			t.Fatal(err)
		}
		match(t, e.b)
		if o, err := c.GetOrder(buy.ID); err != nil || o.Status != "filled" || !o.FilledAvgPrice.Equal(d("102")) {
			t.Errorf("GetOrder with the key: %+v, %v", o, err)
		}
		rest, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("1"), Side: sdk.Sell, Type: sdk.Limit, LimitPrice: dec("500"), TimeInForce: sdk.GTC})
		if err != nil {
			t.Fatal(err)
		}
		if pos, err := c.GetPositions(); err != nil || len(pos) != 1 || !pos[0].Qty.Equal(d("10")) || !pos[0].QtyAvailable.Equal(d("9")) {
			t.Errorf("GetPositions with the key: %+v, %v", pos, err)
		}
		if err := c.CancelOrder(rest.ID); err != nil {
			t.Errorf("CancelOrder with the key: %v", err)
		}
		if _, err := c.ClosePosition("ACME", sdk.ClosePositionRequest{Qty: d("4")}); err != nil {
			t.Fatal(err)
		}
		match(t, e.b)
		if p, err := c.GetPosition("ACME"); err != nil || !p.Qty.Equal(d("6")) {
			t.Errorf("GetPosition with the key: %+v, %v", p, err)
		}
		if orders, err := c.GetOrders(sdk.GetOrdersRequest{Status: "all", Limit: 50}); err != nil || len(orders) != 3 {
			t.Errorf("GetOrders with the key: %d orders, %v; want 3", len(orders), err)
		}
		// The OAuth token still sees the same account.
		var a alpaca.AccountJSON
		if st := e.get(t, tok.AccessToken, "/v2/account", &a); st != http.StatusOK || !a.Cash.Equal(d("99388")) {
			t.Errorf("the account through the token: %d, cash %s", st, a.Cash)
		}

		// Wrong, unknown, incomplete or doubled credentials: Alpaca's 401.
		other := strings.Repeat("A", 40)
		for name, h := range map[string]map[string]string{
			"wrong secret":  {"APCA-API-KEY-ID": id, "APCA-API-SECRET-KEY": other},
			"unknown key":   {"APCA-API-KEY-ID": "PKAAAAAAAAAAAAAAAAAA", "APCA-API-SECRET-KEY": secret},
			"no secret":     {"APCA-API-KEY-ID": id},
			"no key id":     {"APCA-API-SECRET-KEY": secret},
			"id as secret":  {"APCA-API-KEY-ID": id, "APCA-API-SECRET-KEY": id},
			"key and token": {"APCA-API-KEY-ID": id, "APCA-API-SECRET-KEY": secret, "Authorization": "Bearer " + tok.AccessToken},
		} {
			if st, body := e.rawGet(t, h); st != http.StatusUnauthorized || strings.TrimSpace(body) != unauthorizedBody {
				t.Errorf("%s: %d %s, want 401 %s", name, st, body, unauthorizedBody)
			}
		}
		if st, _ := e.rawGet(t, map[string]string{"APCA-API-KEY-ID": id, "APCA-API-SECRET-KEY": secret}); st != http.StatusOK {
			t.Errorf("the right key: %d", st)
		}
		if _, err := e.keyClient(id, other).GetAccount(); !isStatus(err, http.StatusUnauthorized) {
			t.Errorf("the SDK with a wrong secret: %v, want 401", err)
		}

		// A key of another account reaches that account only, and this
		// account's page cannot revoke it.
		_, otherAccount := e.connect(t)
		ok, okSecret, err := e.b.CreateAPIKey(context.Background(), uuid.MustParse(otherAccount), "")
		if err != nil {
			t.Fatal(err)
		}
		if a, err := e.keyClient(ok.ID, okSecret).GetAccount(); err != nil || a.ID != otherAccount {
			t.Errorf("the other account's key: %+v, %v", a, err)
		}
		_, page := br.get(e.srv.URL + "/paper/account")
		f := accountForms(t, page)["/paper/account/keys/revoke "+id]
		f.Fields.Set("key_id", ok.ID)
		if resp, _ := br.post(e.srv.URL+f.Action, f.Fields); resp.StatusCode != http.StatusNotFound {
			t.Errorf("revoking another account's key: %s, want 404", resp.Status)
		}
		if _, err := e.keyClient(ok.ID, okSecret).GetAccount(); err != nil {
			t.Errorf("the other account's key after a forged revocation: %v", err)
		}

		// Revoked on the page, the key answers 401 at once.
		f = accountForms(t, page)["/paper/account/keys/revoke "+id]
		resp, body := br.post(e.srv.URL+f.Action, f.Fields)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/paper/account?revoked="+id {
			t.Fatalf("revoke: %s to %q\n%s", resp.Status, resp.Header.Get("Location"), body)
		}
		if _, page := br.get(e.srv.URL + resp.Header.Get("Location")); !strings.Contains(page, "The key "+id+" is revoked") || !strings.Contains(page, "This account has no API keys.") {
			t.Errorf("the page after revoking:\n%s", page)
		}
		if st, body := e.rawGet(t, map[string]string{"APCA-API-KEY-ID": id, "APCA-API-SECRET-KEY": secret}); st != http.StatusUnauthorized || strings.TrimSpace(body) != unauthorizedBody {
			t.Errorf("a revoked key: %d %s, want 401 %s", st, body, unauthorizedBody)
		}
		if _, err := c.GetAccount(); !isStatus(err, http.StatusUnauthorized) {
			t.Errorf("the SDK with a revoked key: %v, want 401", err)
		}
		if err := e.b.RevokeAPIKey(context.Background(), uuid.MustParse(accountID), id); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("revoking a revoked key: %v, want ErrNotFound", err)
		}
	})
}

// TestAccountPage checks the account page's defences: sign-in links ask
// for an access token with the account:write scope (never an API key),
// expire and work once; sessions expire and end on sign-out; forms need
// the session's CSRF token; an account holds at most MaxAPIKeys keys.
func TestAccountPage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
		tok, accountID := e.connect(t)

		// A token without account:write may not ask for a link; an API
		// key may not either.
		narrow := *e.conf
		narrow.Scopes = []string{"trading"}
		verifier := oauth2.GenerateVerifier()
		q := e.consent(t, e.browser(t), narrow.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), "approve")
		ntok, err := narrow.Exchange(e.ctx, q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		if st, body := e.signInLink(t, ntok.AccessToken); st != http.StatusForbidden || !strings.Contains(body, `"code":40310000`) {
			t.Errorf("a link for a token without account:write: %d %s, want 403", st, body)
		}
		if st, _ := e.signInLink(t, "not-a-token"); st != http.StatusUnauthorized {
			t.Errorf("a link for an unknown token: %d, want 401", st)
		}
		k, secret, err := e.b.CreateAPIKey(context.Background(), uuid.MustParse(accountID), "k")
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/paper/account/sign-in-links", nil)
		req.Header.Set("APCA-API-KEY-ID", k.ID)
		req.Header.Set("APCA-API-SECRET-KEY", secret)
		if resp, err := e.srv.Client().Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a link asked for with an API key: %v, %v; want 401", resp.Status, err)
		} else {
			resp.Body.Close()
		}

		// Without a session, the page answers 401.
		if resp, page := e.browser(t).get(e.srv.URL + "/paper/account"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(page, "not signed in") {
			t.Errorf("the page without a session: %s\n%s", resp.Status, page)
		}

		// A link expires after SignInLinkTTL.
		_, link := e.signInLink(t, tok.AccessToken)
		e.clock.Add(portal.SignInLinkTTL)
		if resp, _ := e.browser(t).get(e.srv.URL + link); resp.StatusCode != http.StatusForbidden {
			t.Errorf("an expired link: %s, want 403", resp.Status)
		}

		// Forms need the session's CSRF token: none, or another
		// session's, answers 403 and creates nothing.
		_, link = e.signInLink(t, tok.AccessToken)
		br := e.signIn(t, link)
		_, link = e.signInLink(t, tok.AccessToken)
		other := e.signIn(t, link)
		_, page := br.get(e.srv.URL + "/paper/account")
		mine := accountForms(t, page)["/paper/account/keys"]
		_, page = other.get(e.srv.URL + "/paper/account")
		theirs := accountForms(t, page)["/paper/account/keys"]
		if mine.Fields.Get("csrf_token") == theirs.Fields.Get("csrf_token") {
			t.Error("two sessions share a CSRF token")
		}
		for name, f := range map[string]url.Values{
			"no token":              {"name": {"x"}},
			"another session's":     {"name": {"x"}, "csrf_token": theirs.Fields["csrf_token"]},
			"a token posted twice ": {"name": {"x"}, "csrf_token": {mine.Fields.Get("csrf_token"), mine.Fields.Get("csrf_token")}},
		} {
			if resp, _ := br.post(e.srv.URL+"/paper/account/keys", f); resp.StatusCode != http.StatusForbidden {
				t.Errorf("create with %s: %s, want 403", name, resp.Status)
			}
		}
		if n := count(t, db, "paper_api_keys"); n != 1 {
			t.Errorf("%d keys after forged forms, want 1", n)
		}

		// A name of several lines is refused on the page.
		f := mine.Fields
		f.Set("name", "a\nb")
		if resp, page := br.post(e.srv.URL+"/paper/account/keys", f); resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "The name must be at most 100 characters on one line.") {
			t.Errorf("a name of two lines: %s\n%s", resp.Status, page)
		}
		// At most MaxAPIKeys keys at once: the page says so.
		for range paper.MaxAPIKeys - 1 {
			e.createKey(t, br, "")
		}
		f.Set("name", "one too many")
		if resp, page := br.post(e.srv.URL+"/paper/account/keys", f); resp.StatusCode != http.StatusConflict ||
			!strings.Contains(page, "An account holds at most 10 API keys: revoke one first.") || !strings.Contains(page, `value="one too many"`) {
			t.Errorf("an 11th key: %s\n%s", resp.Status, page)
		}
		if _, _, err := e.b.CreateAPIKey(context.Background(), uuid.MustParse(accountID), ""); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("CreateAPIKey beyond the limit: %v, want ErrConflict", err)
		}
		if _, _, err := e.b.CreateAPIKey(context.Background(), uuid.New(), ""); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("CreateAPIKey for no account: %v, want ErrNotFound", err)
		}

		// Signing out ends the session: the old cookie no longer works.
		_, page = other.get(e.srv.URL + "/paper/account")
		so := accountForms(t, page)["/paper/account/sign-out"]
		var cookie *http.Cookie
		u, _ := url.Parse(e.srv.URL + "/paper/account")
		for _, c := range other.c.Jar.Cookies(u) {
			if c.Name == "paper_session" {
				cookie = c
			}
		}
		if cookie == nil {
			t.Fatal("no session cookie")
		}
		if resp, _ := other.post(e.srv.URL+so.Action, so.Fields); resp.StatusCode != http.StatusOK {
			t.Errorf("sign out: %s", resp.Status)
		}
		req, _ = http.NewRequest(http.MethodGet, e.srv.URL+"/paper/account", nil)
		req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
		if resp, err := e.srv.Client().Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the page with a signed-out session: %v, %v; want 401", resp.Status, err)
		} else {
			resp.Body.Close()
		}

		// A session ends after SessionTTL.
		e.clock.Add(portal.SessionTTL - time.Second)
		if resp, _ := br.get(e.srv.URL + "/paper/account"); resp.StatusCode != http.StatusOK {
			t.Errorf("the page before the session ends: %s", resp.Status)
		}
		e.clock.Add(time.Second)
		if resp, _ := br.get(e.srv.URL + "/paper/account"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the page after the session ended: %s, want 401", resp.Status)
		}
	})
}

// TestSignInLinkPublicURL checks that with Config.PublicURL a sign-in
// link is an absolute URL on it.
func TestSignInLinkPublicURL(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{}, portal.Config{PublicURL: "https://broker.example/"})
		_, accountID := e.connect(t)
		r := httptest.NewRequest(http.MethodPost, "https://broker.example/dashboard", nil)
		link, exp, err := e.p.SignInLink(httptest.NewRecorder(), r, uuid.MustParse(accountID))
		if err != nil || !strings.HasPrefix(link, "https://broker.example/paper/account/sign-in?token=") || !exp.Equal(t0.Add(portal.SignInLinkTTL)) {
			t.Errorf("SignInLink() = %s, %s, %v", link, exp, err)
		}
		if _, _, err := e.p.SignInLink(httptest.NewRecorder(), r, uuid.New()); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("SignInLink(no account): %v, want ErrNotFound", err)
		}
	})
}
