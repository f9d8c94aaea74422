package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tradekit/tradekit/internal/consent"
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
	back, _, err := consent.Decide(ctx, consent.Browser(app.Host, a.rec), created.AuthorizationURL, "approve")
	if err != nil {
		return "", err
	}
	if back.Query().Get("status") != "active" || back.Query().Get("connectionId") != created.ID {
		return "", fmt.Errorf("back at the application with %s", back)
	}
	return created.ID, nil
}
