package paper_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// The registered client of every test, and a second one.
const (
	clientID     = "tradekit"
	clientSecret = "s3cret+/ &=" // characters that Basic auth must form-encode
	clientName   = "Tradekit Test"
	redirectURI  = "http://127.0.0.1:1/brokers/callback?from=paper"
	otherURI     = "http://127.0.0.1:1/other"
	otherID      = "other"
	otherSecret  = "other-secret"
	otherRedir   = "http://127.0.0.1:2/cb"
)

// t0 is when every test starts: Monday 2 March 2026, 15:00 UTC.
var t0 = time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)

// env is a paper broker mounted under /paper as `tradekit serve` mounts
// it, behind a real HTTP server.
type env struct {
	db    *bun.DB
	clock *testkit.Clock // the broker's Config.Now, from t0
	b     *paper.Broker
	p     *portal.Portal
	srv   *httptest.Server
	conf  *oauth2.Config // the registered client, authenticating with Basic
	ctx   context.Context
	// lastToken is the access token of the account env.trader connected last.
	lastToken string
}

// mustEnv starts a broker on db with its portal in front of it. cfg's
// Now is set here; of pc (at most one), Clients and Prefix are set here,
// and a zero SignupLimit turns the limit off, since every test signs up
// from 127.0.0.1 (the tests of the limit set one); their other fields are
// kept.
func mustEnv(t *testing.T, db *bun.DB, cfg paper.Config, pc ...portal.Config) *env {
	t.Helper()
	e := &env{db: db, clock: testkit.NewClock(t0)}
	var pcfg portal.Config
	if len(pc) > 0 {
		pcfg = pc[0]
	}
	if pcfg.SignupLimit == 0 {
		pcfg.SignupLimit = -1
	}
	pcfg.Clients = []portal.Client{
		{ID: clientID, Secret: clientSecret, Name: clientName, RedirectURIs: []string{redirectURI, otherURI}},
		{ID: otherID, Secret: otherSecret, RedirectURIs: []string{otherRedir}},
	}
	pcfg.Prefix = "/paper"
	cfg.Now = e.clock.Now
	e.b = paper.New(db, cfg)
	e.p = portal.New(db, e.b, pcfg)
	mux := http.NewServeMux()
	mux.Handle("/paper/", http.StripPrefix("/paper", e.p.Handler()))
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	e.conf = &oauth2.Config{
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   e.srv.URL + "/paper/oauth/authorize",
			TokenURL:  e.srv.URL + "/paper/oauth/token",
			AuthStyle: oauth2.AuthStyleInHeader,
		},
		RedirectURL: redirectURI,
		Scopes:      []string{"trading", "account:write"},
	}
	e.ctx = context.WithValue(context.Background(), oauth2.HTTPClient, e.srv.Client())
	return e
}

// authURL returns the registered client's authorization URL with state,
// an S256 challenge of a fresh verifier, and opts.
func (e *env) authURL(state string, opts ...oauth2.AuthCodeOption) string {
	return e.conf.AuthCodeURL(state, append([]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(oauth2.GenerateVerifier())}, opts...)...)
}

// browser is a user agent with cookies that does not follow redirects,
// so that tests see the broker's 303s.
type browser struct {
	t *testing.T
	c *http.Client
}

func (e *env) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// get returns the response to GET u and its body.
func (br *browser) get(u string) (*http.Response, string) {
	br.t.Helper()
	resp, err := br.c.Get(u)
	if err != nil {
		br.t.Fatal(err)
	}
	return resp, readBody(br.t, resp)
}

// post returns the response to a form POST and its body.
func (br *browser) post(u string, form url.Values) (*http.Response, string) {
	br.t.Helper()
	resp, err := br.c.PostForm(u, form)
	if err != nil {
		br.t.Fatal(err)
	}
	return resp, readBody(br.t, resp)
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// htmlForm is the consent page's form as a browser sees it.
type htmlForm struct {
	Action, Method string
	Fields         url.Values // the hidden inputs
	Buttons        []string   // name=value of each submit button
}

// parseForm reads the first form of an HTML page.
func parseForm(t *testing.T, page string) htmlForm {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	f := htmlForm{Fields: url.Values{}}
	inForm := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
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
			switch el.Name.Local {
			case "form":
				if f.Action != "" {
					t.Fatalf("the page has two forms")
				}
				inForm, f.Action, f.Method = true, attr["action"], attr["method"]
			case "input":
				if inForm && attr["type"] == "hidden" {
					f.Fields.Add(attr["name"], attr["value"])
				}
			case "button":
				if inForm {
					f.Buttons = append(f.Buttons, attr["name"]+"="+attr["value"])
				}
			}
		case xml.EndElement:
			if el.Name.Local == "form" {
				inForm = false
			}
		}
	}
	if f.Action == "" {
		t.Fatalf("no form in the page:\n%s", page)
	}
	return f
}

// consent opens the consent page of authURL, submits its form with the
// decision ("approve" or "deny") and returns the query of the 303's
// Location, which must be the redirect URI.
func (e *env) consent(t *testing.T, br *browser, authURL, decision string) url.Values {
	t.Helper()
	resp, page := br.get(authURL)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET consent page: %s\n%s", resp.Status, page)
	}
	f := parseForm(t, page)
	f.Fields.Set("decision", decision)
	resp, body := br.post(e.srv.URL+f.Action, f.Fields)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST decision: %s, want 303\n%s", resp.Status, body)
	}
	return redirectQuery(t, resp, redirectURI)
}

// redirectQuery returns the query of a redirect to base, checking that
// Location starts with base's scheme, host and path.
func redirectQuery(t *testing.T, resp *http.Response, base string) url.Values {
	t.Helper()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := url.Parse(base)
	if loc.Scheme != want.Scheme || loc.Host != want.Host || loc.Path != want.Path {
		t.Fatalf("redirected to %s, want %s", loc, base)
	}
	q := loc.Query()
	for k, vs := range want.Query() { // the redirect URI's own query is kept
		if q.Get(k) != vs[0] {
			t.Errorf("redirect lost %s=%s: %s", k, vs[0], loc)
		}
	}
	return q
}

// grant is what a client holds after an approval.
type grant struct {
	code, verifier string
}

// approve runs the browser's part of the flow with PKCE and returns the
// code and its verifier.
func (e *env) approve(t *testing.T) grant {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	state := oauth2.GenerateVerifier()[:16]
	q := e.consent(t, e.browser(t), e.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), "approve")
	if q.Get("state") != state {
		t.Fatalf("state %q, want %q", q.Get("state"), state)
	}
	if q.Get("code") == "" {
		t.Fatalf("no code in the redirect: %v", q)
	}
	return grant{code: q.Get("code"), verifier: verifier}
}

// connect runs the whole flow and returns the client's token and the
// account's id.
func (e *env) connect(t *testing.T) (*oauth2.Token, string) {
	t.Helper()
	g := e.approve(t)
	tok, err := e.conf.Exchange(e.ctx, g.code, oauth2.VerifierOption(g.verifier))
	if err != nil {
		t.Fatal(err)
	}
	var a alpaca.AccountJSON
	if status := e.get(t, tok.AccessToken, "/v2/account", &a); status != http.StatusOK {
		t.Fatalf("GET /v2/account: %d", status)
	}
	return tok, a.ID
}

// get calls the API at path (under /paper) with the access token, decodes
// the body into v when the answer is 200 and returns the status. Any
// other answer's body is decoded as an alpaca.ErrorJSON into v when v is
// one.
func (e *env) get(t *testing.T, accessToken, path string, v any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/paper"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accessToken != "" {
		req.Header.Set("Authorization", "Bearer "+accessToken)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	_, isErr := v.(*alpaca.ErrorJSON)
	if resp.StatusCode == http.StatusOK || isErr {
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, body)
		}
	}
	return resp.StatusCode
}

// oauthPost POSTs a form to an OAuth endpoint (under /paper) with the
// client's Basic credentials when user is not empty, and returns the
// response and its body.
func (e *env) oauthPost(t *testing.T, path, user, pass string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/paper"+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readBody(t, resp)
}

// revoke revokes a token as the registered client and checks the 200.
func (e *env) revoke(t *testing.T, tok string) {
	t.Helper()
	resp, body := e.oauthPost(t, "/oauth/revoke", clientID, clientSecret, url.Values{"token": {tok}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %s\n%s", resp.Status, body)
	}
}

// oauthErrorCode returns the OAuth error code of a failed Exchange or
// refresh, or "" for another error.
func oauthErrorCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

// count returns the number of rows of a table.
func count(t *testing.T, db bun.IDB, table string) int {
	t.Helper()
	n, err := db.NewSelect().TableExpr(table).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// unauthorized is the body of every 401 of the API.
var unauthorized = alpaca.ErrorJSON{Code: 40110000, Message: "request is not authorized"}
