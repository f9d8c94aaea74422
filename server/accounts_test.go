package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// mustAccount creates an administrator on the plan with members invited
// into its account, and returns a fresh API key of each, the
// administrator's first.
func mustAccount(tb testing.TB, db bun.IDB, name, plan string, members int) []string {
	tb.Helper()
	ctx := context.Background()
	st := billing.NewStore(db)
	p, err := st.Plan(ctx, plan)
	if err != nil {
		tb.Fatal(err)
	}
	admin := billing.User{Email: name + "@example.com", Name: name, PlanID: p.ID, IsAdmin: true}
	if err := st.CreateUser(ctx, &admin, time.Now()); err != nil {
		tb.Fatal(err)
	}
	users := []billing.User{admin}
	for i := range members {
		m := billing.User{Email: fmt.Sprintf("%s-member%d@example.com", name, i), Name: "Member"}
		if _, err := st.Invite(ctx, admin, &m, time.Now(), time.Hour); err != nil {
			tb.Fatal(err)
		}
		users = append(users, m)
	}
	keys := make([]string, len(users))
	for i, u := range users {
		if _, keys[i], err = st.CreateKey(ctx, u.ID, "test", time.Now()); err != nil {
			tb.Fatal(err)
		}
	}
	return keys
}

// TestRateLimitPerAccount: a free account (30 requests a minute) whose
// administrator invited two members sends 28 requests from each, 84 in
// one minute: together they get the plan's 30, as one user would, and
// the usage they see is the account's.
func TestRateLimitPerAccount(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		now := time.Date(2026, 11, 22, 9, 30, 15, 0, time.UTC)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Now: func() time.Time { return now }}, db).Handler()
		keys := mustAccount(t, db, "ratelimited", "free", 2)
		other := mustKey(t, db, "bystander@example.com", "free")
		ok := make([]int, len(keys))
		for i := range 28 {
			for k, key := range keys {
				switch r := get(t, h, "/api/v1/billing/plans", key); r.status {
				case http.StatusOK:
					ok[k]++
				case http.StatusTooManyRequests:
					if r.errorCode() != "RATE_LIMITED" || r.header.Get("Retry-After") != "45" {
						t.Fatalf("request %d of key %d: %d %s, Retry-After %q", i, k, r.status, r.raw, r.header.Get("Retry-After"))
					}
				default:
					t.Fatalf("request %d of key %d: %d %s", i, k, r.status, r.raw)
				}
			}
		}
		if total := ok[0] + ok[1] + ok[2]; total != 30 {
			t.Errorf("the account's three members got %v requests through in one minute, %d in all; want 30 in all", ok, total)
		}
		// Another account is not affected.
		if r := get(t, h, "/api/v1/billing/plans", other); r.status != http.StatusOK {
			t.Errorf("another account's request: %d %s", r.status, r.raw)
		}
	})
}

// TestCountLimitsPerAccount: a free account (1 watchlist, 1 portfolio)
// whose administrator invited two members keeps 1 watchlist in all, not
// one each, and its members cannot connect a broker once one of them
// holds the plan's portfolio.
func TestCountLimitsPerAccount(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		ts := startTrading(t, db)
		keys := mustAccount(t, db, "counted", "free", 2)
		made := 0
		for k, key := range keys {
			r := ts.call(t, "POST", "/api/v1/watchlists?name=List", key)
			switch {
			case r.status == http.StatusOK:
				made++
			case r.status == http.StatusForbidden && limitOf(r) == "watchlists":
			default:
				t.Errorf("watchlist of key %d: %d %s", k, r.status, r.raw)
			}
		}
		if made != 1 {
			t.Errorf("the account's three members made %d watchlists on the free plan, want 1", made)
		}

		connectPaper(t, ts, keys[0])
		r := ts.call(t, "POST", "/api/v1/brokers/connections?"+query("provider", "paper", "redirectUrl", appURL), keys[1])
		if r.status != http.StatusForbidden || limitOf(r) != "portfolios" {
			t.Errorf("a member's connection past the account's portfolio: %d %s, want 403 with limit portfolios", r.status, r.raw)
		}
	})
}

// TestPendingConnectionsBounded: a user may have 5 connections waiting
// for authorization at once; the 6th is a 403 naming the limit; a
// completed authorization or an expired state frees a slot; another
// member of the account has slots of their own.
func TestPendingConnectionsBounded(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		ts := startTrading(t, db)
		keys := mustAccount(t, db, "pending", "business", 1)
		create := func(key string) response {
			return ts.call(t, "POST", "/api/v1/brokers/connections?"+query("provider", "paper", "redirectUrl", appURL), key)
		}
		var first map[string]any
		for i := range 5 {
			r := create(keys[0])
			if r.status != http.StatusOK {
				t.Fatalf("pending connection %d: %d %s", i+1, r.status, r.raw)
			}
			if i == 0 {
				first = r.object(t)
			}
		}
		r := create(keys[0])
		if r.status != http.StatusForbidden || r.errorCode() != "FORBIDDEN" || limitOf(r) != "pendingConnections" {
			t.Fatalf("6th pending connection: %d %s, want 403 with limit pendingConnections", r.status, r.raw)
		}
		if r := create(keys[1]); r.status != http.StatusOK {
			t.Errorf("another member's pending connection: %d %s", r.status, r.raw)
		}

		// Completing one frees its slot.
		to, _ := decide(t, browser(), first["authorizationUrl"].(string), "approve")
		if to.Query().Get("status") != "active" {
			t.Fatalf("back at %s", to)
		}
		if r := create(keys[0]); r.status != http.StatusOK {
			t.Fatalf("after one completed: %d %s", r.status, r.raw)
		}
		if r := create(keys[0]); r.status != http.StatusForbidden {
			t.Fatalf("5 waiting again, another: %d %s", r.status, r.raw)
		}
		// Expiring frees them all: states live 10 minutes.
		ts.clock.Set(time.Now().Add(11 * time.Minute))
		for i := range 5 {
			if r := create(keys[0]); r.status != http.StatusOK {
				t.Fatalf("after expiry, pending connection %d: %d %s", i+1, r.status, r.raw)
			}
		}
	})
}

// limitOf returns error.details.limit of an error envelope.
func limitOf(r response) string {
	e, _ := r.body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	s, _ := d["limit"].(string)
	return s
}
