package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// symbols are the demo stocks the leader trades (closes of about 28 to
// 113 USD).
var symbols = []string{"ALBN", "KWLN", "MPLR", "ELBW"}

// appURL is where the paper broker's OAuth flow sends the "browser" back
// at the end: a client application that is never contacted.
const appURL = "https://app.example/connected"

// trader is a user of the run with a connected paper account.
type trader struct {
	name      string
	email     string
	key       string // API key
	conn      string // broker connection id
	portfolio string // portfolio id of the connection
	follow    string // follow id, for the followers
}

// users are the run's traders, and what the leader trades.
type users struct {
	leader    *trader
	followers []*trader
	profile   string            // the leader's profile id
	assets    map[string]string // symbol → asset id
}

// setup creates the users, connects their paper accounts, raises their
// guardrails, publishes the leader and makes the followers follow it.
// Each user works through another instance, so both serve the setup.
func setup(ctx context.Context, a *api, c *cluster, say func(string, ...any)) (*users, error) {
	u := &users{assets: map[string]string{}}
	all := []*trader{
		{name: "leader", email: "leader@faults.example"},
		{name: "follower1", email: "follower1@faults.example"},
		{name: "follower2", email: "follower2@faults.example"},
	}
	u.leader, u.followers = all[0], all[1:]
	for i, t := range all {
		out, err := c.tradekit(ctx, "keys", "create", "--email", t.email, "--name", "faults", "--plan", "business")
		if err != nil {
			return nil, err
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		t.key = strings.TrimSpace(lines[len(lines)-1])
		inst := i % 2
		if t.conn, err = connectPaper(ctx, a, inst, t.key); err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		err = a.call(ctx, inst, "PATCH", "/api/v1/brokers/guardrails?maxDailyTrades=100000&maxPositionSizePct=100&maxPortfolioRiskPct=100", t.key, nil)
		if err != nil {
			return nil, err
		}
		if t.portfolio, err = waitPortfolio(ctx, a, inst, t); err != nil {
			return nil, err
		}
		say("%s: paper account connected through %s (connection %s, portfolio %s)", t.name, c.inst[inst].name, t.conn, t.portfolio)
	}

	var profile struct {
		ID string `json:"id"`
	}
	q := url.Values{"portfolioId": {u.leader.portfolio}, "displayName": {"Fault Run Leader"}, "slug": {"fault-run-leader"}}
	if err := a.call(ctx, 0, "POST", "/api/v1/copy-trading/publish?"+q.Encode(), u.leader.key, &profile); err != nil {
		return nil, err
	}
	u.profile = profile.ID
	for i, f := range u.followers {
		q := url.Values{"leaderProfileId": {u.profile}, "autoSync": {"true"}, "allocationPct": {"50"},
			"maxPositionPct": {"100"}, "copyStopLossPct": {"100"}}
		var follow struct {
			ID string `json:"id"`
		}
		if err := a.call(ctx, i%2, "POST", "/api/v1/copy-trading/follow?"+q.Encode(), f.key, &follow); err != nil {
			return nil, err
		}
		f.follow = follow.ID
	}
	say("leader published (profile %s); followers follow it with auto-sync, allocation 50 %%, max position 100 %%", u.profile)

	for _, s := range symbols {
		var asset struct {
			ID string `json:"id"`
		}
		if err := a.call(ctx, 0, "GET", "/api/v1/market-data/assets/symbol/"+s, u.leader.key, &asset); err != nil {
			return nil, err
		}
		u.assets[s] = asset.ID
	}
	return u, nil
}

// waitPortfolio waits, at most 10 s, for the first sync of t's
// connection to create its portfolio, and returns the portfolio's id.
func waitPortfolio(ctx context.Context, a *api, inst int, t *trader) (string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list []struct {
			ID           string `json:"id"`
			ConnectionID string `json:"connectionId"`
		}
		if err := a.call(ctx, inst, "GET", "/api/v1/portfolios", t.key, &list); err != nil {
			return "", err
		}
		for _, p := range list {
			if p.ConnectionID == t.conn {
				return p.ID, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s: no portfolio for connection %s after 10 s", t.name, t.conn)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The consent page's form, as the server tests read it.
var (
	formRE   = regexp.MustCompile(`(?is)<form[^>]*method="post"[^>]*>(.*?)</form>`)
	actionRE = regexp.MustCompile(`(?is)<form[^>]*action="([^"]*)"`)
	inputRE  = regexp.MustCompile(`(?is)<(input|button)\b([^>]*)>`)
	attrRE   = regexp.MustCompile(`(?is)\b(name|value|type)="([^"]*)"`)
)

// connectPaper connects a paper account for the key's user through
// instance inst, driving the OAuth flow as a browser would: it creates
// the connection, opens the authorization URL (the consent page, which
// sets the paper_csrf cookie), submits the form with "approve", follows
// the redirect to the OAuth callback and stops at the client
// application's URL. It returns the active connection's id.
func connectPaper(ctx context.Context, a *api, inst int, key string) (string, error) {
	var created struct {
		ID               string `json:"id"`
		AuthorizationURL string `json:"authorizationUrl"`
	}
	q := url.Values{"provider": {"paper"}, "redirectUrl": {appURL}}
	if err := a.call(ctx, inst, "POST", "/api/v1/brokers/connections?"+q.Encode(), key, &created); err != nil {
		return "", err
	}
	app, _ := url.Parse(appURL)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Transport: a.rec, Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host == app.Host {
				return http.ErrUseLastResponse
			}
			return nil
		}}

	req, err := http.NewRequestWithContext(ctx, "GET", created.AuthorizationURL, nil)
	if err != nil {
		return "", err
	}
	res, err := browser.Do(req)
	if err != nil {
		return "", fmt.Errorf("consent page: %w", err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("consent page: %d %s", res.StatusCode, page)
	}
	action, form, err := consentForm(res.Request.URL, page)
	if err != nil {
		return "", err
	}

	req, err = http.NewRequestWithContext(ctx, "POST", action.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err = browser.Do(req)
	if err != nil {
		return "", fmt.Errorf("consent: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Request.URL.Path != "/api/v1/brokers/oauth/callback" {
		return "", fmt.Errorf("after consent: %d at %s, want 303 from the callback", res.StatusCode, res.Request.URL)
	}
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		return "", err
	}
	if back.Query().Get("status") != "active" || back.Query().Get("connectionId") != created.ID {
		return "", fmt.Errorf("back at the application with %s", back)
	}
	return created.ID, nil
}

// consentForm reads the consent page: where its form posts to (resolved
// against the page's URL) and the values to post to approve, the hidden
// fields (the CSRF token among them) and the "approve" button.
func consentForm(pageURL *url.URL, page []byte) (*url.URL, url.Values, error) {
	form := formRE.FindSubmatch(page)
	if form == nil {
		return nil, nil, fmt.Errorf("no POST form on the consent page:\n%s", page)
	}
	action := pageURL
	if m := actionRE.FindSubmatch(page); m != nil {
		if u, err := pageURL.Parse(html.UnescapeString(string(m[1]))); err == nil {
			action = u
		}
	}
	values := url.Values{}
	approved := false
	for _, m := range inputRE.FindAllSubmatch(form[1], -1) {
		attrs := map[string]string{}
		for _, at := range attrRE.FindAllSubmatch(m[2], -1) {
			attrs[strings.ToLower(string(at[1]))] = html.UnescapeString(string(at[2]))
		}
		switch {
		case attrs["name"] == "":
		case strings.EqualFold(string(m[1]), "button") || attrs["type"] == "submit":
			if attrs["value"] == "approve" {
				values.Set(attrs["name"], attrs["value"])
				approved = true
			}
		default:
			values.Set(attrs["name"], attrs["value"])
		}
	}
	if !approved {
		return nil, nil, fmt.Errorf("no approve button on the consent page:\n%s", page)
	}
	return action, values, nil
}
