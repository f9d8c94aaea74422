package copytrading_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// leaderUser is a user with a published leader profile.
type leaderUser struct {
	user    uuid.UUID
	profile uuid.UUID
}

// mustLeader stores a user with an active connection and a portfolio, and
// publishes the portfolio with the slug name.
func mustLeader(t *testing.T, db *bun.DB, s *copytrading.Service, name string) leaderUser {
	t.Helper()
	user, _, portfolio := mustAccount(t, db, name+"@example.com", "10000")
	p, err := s.Publish(context.Background(), user, copytrading.PublishInput{PortfolioID: portfolio, DisplayName: strings.ToUpper(name[:1]) + name[1:], Slug: name})
	if err != nil {
		t.Fatal(err)
	}
	return leaderUser{user, p.ID}
}

// mustFollow makes follower follow leader and returns the follow's id.
func mustFollow(t *testing.T, s *copytrading.Service, follower, leader leaderUser, autoSync bool) uuid.UUID {
	t.Helper()
	f, err := s.Follow(context.Background(), follower.user, copytrading.FollowInput{LeaderProfileID: leader.profile, AutoSync: autoSync})
	if err != nil {
		t.Fatal(err)
	}
	return f.ID
}

// TestFollowLoop builds follows among alice, bob, carol and dave, then
// has one follow another: a follow that would close a loop of live
// follows is refused with the loop's slugs, and any other is recorded.
func TestFollowLoop(t *testing.T) {
	type edge [2]string // follower, leader
	tests := []struct {
		name      string
		follows   []edge // made in order
		autoSync  bool   // of the follows made
		unfollow  []edge // ended after they are all made
		unpublish []string
		follow    edge
		wantErr   string // the whole message; "" when the follow is recorded
	}{
		{name: "direct loop refused", follows: []edge{{"bob", "alice"}}, follow: edge{"alice", "bob"},
			wantErr: `copytrading: following "bob" would close a loop: alice → bob → alice; copies would multiply around it`},
		{name: "direct loop with auto-sync refused", follows: []edge{{"bob", "alice"}}, autoSync: true, follow: edge{"alice", "bob"},
			wantErr: `copytrading: following "bob" would close a loop: alice → bob → alice; copies would multiply around it`},
		{name: "three-hop loop refused", follows: []edge{{"alice", "bob"}, {"bob", "carol"}}, follow: edge{"carol", "alice"},
			wantErr: `copytrading: following "alice" would close a loop: carol → alice → bob → carol; copies would multiply around it`},
		{name: "shortest of two loops named", follows: []edge{{"alice", "dave"}, {"alice", "bob"}, {"bob", "carol"}, {"carol", "dave"}},
			follow:  edge{"dave", "alice"},
			wantErr: `copytrading: following "alice" would close a loop: dave → alice → dave; copies would multiply around it`},
		{name: "longer loop refused", follows: []edge{{"alice", "bob"}, {"bob", "carol"}, {"carol", "dave"}}, follow: edge{"dave", "alice"},
			wantErr: `copytrading: following "alice" would close a loop: dave → alice → bob → carol → dave; copies would multiply around it`},
		{name: "chain accepted", follows: []edge{{"alice", "bob"}, {"bob", "carol"}}, follow: edge{"dave", "alice"}},
		{name: "shortcut along a chain accepted", follows: []edge{{"alice", "bob"}, {"bob", "carol"}}, follow: edge{"alice", "carol"}},
		{name: "unfollowed follow does not count", follows: []edge{{"bob", "alice"}}, unfollow: []edge{{"bob", "alice"}}, follow: edge{"alice", "bob"}},
		{name: "unfollowed link of a chain does not count", follows: []edge{{"alice", "bob"}, {"bob", "carol"}}, unfollow: []edge{{"bob", "carol"}},
			follow: edge{"carol", "alice"}},
		{name: "unpublished leader does not count", follows: []edge{{"bob", "alice"}}, unpublish: []string{"alice"}, follow: edge{"alice", "bob"}},
		{name: "self follow refused", follow: edge{"alice", "alice"}, wantErr: "copytrading: you cannot follow yourself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each case on databases of its own
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				ctx := context.Background()
				s := copytrading.New(db, copytrading.Config{})
				users := map[string]leaderUser{}
				for _, name := range []string{"alice", "bob", "carol", "dave"} {
					users[name] = mustLeader(t, db, s, name)
				}
				ids := map[edge]uuid.UUID{}
				for _, e := range tt.follows {
					ids[e] = mustFollow(t, s, users[e[0]], users[e[1]], tt.autoSync)
				}
				for _, e := range tt.unfollow {
					if _, err := s.Unfollow(ctx, users[e[0]].user, ids[e]); err != nil {
						t.Fatal(err)
					}
				}
				for _, name := range tt.unpublish {
					if _, err := s.Unpublish(ctx, users[name].user); err != nil {
						t.Fatal(err)
					}
				}
				follower, followed := users[tt.follow[0]], users[tt.follow[1]]
				_, err := s.Follow(ctx, follower.user, copytrading.FollowInput{LeaderProfileID: followed.profile})
				if tt.wantErr == "" {
					if err != nil {
						t.Fatalf("Follow(%s → %s) = %v, want it recorded", tt.follow[0], tt.follow[1], err)
					}
					return
				}
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, tradekit.ErrConflict) {
					t.Fatalf("Follow(%s → %s) = %v\nwant a conflict: %s", tt.follow[0], tt.follow[1], err, tt.wantErr)
				}
				list, err := s.Following(ctx, follower.user)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range list {
					if f.LeaderProfileID == followed.profile {
						t.Errorf("the refused follow was recorded: %+v", f)
					}
				}
			})
		})
	}
}

// TestFollowLoopConcurrent has pairs of leaders follow each other at the
// same time, through two services: in each pair exactly one follow is
// recorded, and the other is refused as closing a loop.
func TestFollowLoopConcurrent(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		services := []*copytrading.Service{copytrading.New(db, copytrading.Config{}), copytrading.New(db, copytrading.Config{})}
		const pairs = 4
		var users [pairs][2]leaderUser
		for i := range users {
			for j := range users[i] {
				users[i][j] = mustLeader(t, db, services[0], fmt.Sprintf("pair%d-%d", i, j))
			}
		}
		var errs [pairs][2]error
		var wg sync.WaitGroup
		for i := range users {
			for j := range users[i] {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i][j] = services[j].Follow(ctx, users[i][j].user, copytrading.FollowInput{LeaderProfileID: users[i][1-j].profile})
				}()
			}
		}
		wg.Wait()
		for i, pair := range errs {
			var recorded, refused int
			for _, err := range pair {
				switch {
				case err == nil:
					recorded++
				case errors.Is(err, tradekit.ErrConflict) && strings.Contains(err.Error(), "would close a loop"):
					refused++
				default:
					t.Errorf("pair %d: %v", i, err)
				}
			}
			if recorded != 1 || refused != 1 {
				t.Errorf("pair %d: %d recorded and %d refused (%v), want one of each", i, recorded, refused, pair)
			}
		}
	})
}
