package copytrading_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/marketdata"
)

// published is a leader whose portfolio is published.
type published struct {
	account
	slug    string
	profile uuid.UUID
}

// mustEquity stores the portfolio's daily equity, a day apart from
// first, without flows.
func mustEquity(tb testing.TB, db bun.IDB, portfolio uuid.UUID, first calendar.Date, equity ...string) {
	tb.Helper()
	for i, e := range equity {
		p := connect.EquityPoint{PortfolioID: portfolio, Date: marketdata.SQLDate(first.AddDays(i)), Equity: decimal.RequireFromString(e)}
		if _, err := db.NewInsert().Model(&p).Exec(context.Background()); err != nil {
			tb.Fatal(err)
		}
	}
}

// mustPublished stores a user with a portfolio of the equity history,
// from 5 January 2026, and publishes it.
func mustPublished(tb testing.TB, db *bun.DB, s *copytrading.Service, equity ...string) published {
	tb.Helper()
	var l published
	id := uuid.NewString()[:8]
	l.slug = "pub-" + id
	l.user, l.conn, l.portfolio = mustAccount(tb, db, l.slug+"@example.com", "10000")
	mustEquity(tb, db, l.portfolio, calendar.NewDate(2026, 1, 5), equity...)
	p, err := s.Publish(context.Background(), l.user, copytrading.PublishInput{PortfolioID: l.portfolio, DisplayName: "Pub " + id, Slug: l.slug})
	if err != nil {
		tb.Fatal(err)
	}
	l.profile = p.ID
	return l
}

// mustFollower stores a user who follows the leader, without auto-sync.
func mustFollower(tb testing.TB, db *bun.DB, s *copytrading.Service, profile uuid.UUID) copytrading.Follow {
	tb.Helper()
	user, _, _ := mustAccount(tb, db, "fan-"+uuid.NewString()[:8]+"@example.com", "10000")
	f, err := s.Follow(context.Background(), user, copytrading.FollowInput{LeaderProfileID: profile})
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// mustSynced marks the portfolio synced after its leader's statistics
// were computed.
func mustSynced(tb testing.TB, db bun.IDB, portfolio uuid.UUID) {
	tb.Helper()
	_, err := db.NewUpdate().Model((*connect.Portfolio)(nil)).Set("updated_at = ?", time.Now().UTC().Add(time.Minute)).
		Where("id = ?", portfolio).Exec(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
}

// testLeaders publishes leaders and reads them back: the lists and their
// orders, a leader's detail and transactions, and unpublishing.
func testLeaders(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	s := copytrading.New(db, copytrading.Config{})
	approx := cmpopts.EquateApprox(0, 1e-9)

	t.Run("lists", func(t *testing.T) {
		// a: 8 % in two rises; b: 10 %, but a rise then a fall, the
		// worst Sharpe ratio; c: 2 % in two small steady rises, the
		// best. a has two followers, c one. The lists are filtered on
		// a return of at least 1.5 %, which leaders with no history
		// (0 %) do not have.
		a := mustPublished(t, db, s, "100", "104", "108")
		b := mustPublished(t, db, s, "100", "120", "110")
		c := mustPublished(t, db, s, "100", "101", "102")
		mustFollower(t, db, s, a.profile)
		mustFollower(t, db, s, a.profile)
		mustFollower(t, db, s, c.profile)
		least, most := 0.015, 0.09
		tests := []struct {
			name      string
			filter    copytrading.LeaderFilter
			want      []string // slugs
			wantTotal int
		}{
			{name: "by total return", filter: copytrading.LeaderFilter{MinReturn: &least, Page: 1, Limit: 10}, want: []string{b.slug, a.slug, c.slug}, wantTotal: 3},
			{name: "by total return, named", filter: copytrading.LeaderFilter{SortBy: copytrading.SortTotalReturn, MinReturn: &least, Page: 1, Limit: 10},
				want: []string{b.slug, a.slug, c.slug}, wantTotal: 3},
			{name: "by Sharpe ratio", filter: copytrading.LeaderFilter{SortBy: copytrading.SortSharpeRatio, MinReturn: &least, Page: 1, Limit: 10},
				want: []string{c.slug, a.slug, b.slug}, wantTotal: 3},
			{name: "by followers", filter: copytrading.LeaderFilter{SortBy: copytrading.SortFollowers, MinReturn: &least, Page: 1, Limit: 10},
				want: []string{a.slug, c.slug, b.slug}, wantTotal: 3},
			{name: "higher least return", filter: copytrading.LeaderFilter{MinReturn: &most, Page: 1, Limit: 10}, want: []string{b.slug}, wantTotal: 1},
			{name: "second page", filter: copytrading.LeaderFilter{MinReturn: &least, Page: 2, Limit: 1}, want: []string{a.slug}, wantTotal: 3},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				list, total, err := s.Leaders(ctx, tt.filter)
				if err != nil {
					t.Fatal(err)
				}
				got := []string{}
				for _, l := range list {
					got = append(got, l.Slug)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" || total != tt.wantTotal {
					t.Errorf("Leaders(%+v): total %d, want %d; slugs mismatch (-want +got):\n%s", tt.filter, total, tt.wantTotal, diff)
				}
			})
		}

		t.Run("figures", func(t *testing.T) {
			list, _, err := s.Leaders(ctx, copytrading.LeaderFilter{SortBy: copytrading.SortFollowers, MinReturn: &least, Page: 1, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			type figures struct {
				Slug        string
				TotalReturn float64
				Followers   int
				Provider    string
				Verified    bool
			}
			var got []figures
			for _, l := range list {
				got = append(got, figures{l.Slug, l.TotalReturn, l.Followers, l.Provider, l.Verified})
			}
			want := []figures{{a.slug, 0.08, 2, "paper", true}, {c.slug, 0.02, 1, "paper", true}, {b.slug, 0.1, 0, "paper", true}}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("Leaders() mismatch (-want +got):\n%s", diff)
			}
		})

		t.Run("unknown order", func(t *testing.T) {
			_, _, err := s.Leaders(ctx, copytrading.LeaderFilter{SortBy: "name", Page: 1, Limit: 10})
			var pe *tradekit.ParamError
			if !errors.As(err, &pe) || pe.Param != "sortBy" || !errors.Is(err, tradekit.ErrInvalid) {
				t.Errorf("Leaders(sortBy name) = %v, want an invalid sortBy", err)
			}
		})

		t.Run("refreshed after a sync", func(t *testing.T) {
			// c's portfolio syncs a day that takes it to 130: c leads.
			mustEquity(t, db, c.portfolio, calendar.NewDate(2026, 1, 8), "130")
			mustSynced(t, db, c.portfolio)
			list, _, err := s.Leaders(ctx, copytrading.LeaderFilter{MinReturn: &least, Page: 1, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].Slug != c.slug || !cmp.Equal(list[0].TotalReturn, 0.3, approx) {
				t.Errorf("Leaders() = %+v, want %s first with a total return of 0.3", list, c.slug)
			}
		})

		if diff := cmp.Diff([]string{"totalReturn", "sharpeRatio", "followers"}, copytrading.SortOrders()); diff != "" {
			t.Errorf("SortOrders() mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("detail", func(t *testing.T) {
		// 0.5 % in January, then back to 100 in February, which a sync
		// brings: no return in all, so that the lists leave it out.
		l := mustPublished(t, db, s)
		mustEquity(t, db, l.portfolio, calendar.NewDate(2026, 1, 29), "100", "100.5")
		acme := mustAsset(t, db, "ACME", "50")
		// Cash of 10,000, 10 ACME at 50, and eleven positions the
		// broker values at 10 each, of no Tradekit asset.
		mustPosition(t, db, l.portfolio, acme, "10")
		for i := range 11 {
			v := decimal.New(10, 0)
			p := connect.Position{PortfolioID: l.portfolio, Symbol: fmt.Sprintf("X%02d", i), Quantity: decimal.New(1, 0), BrokerValue: &v}
			if _, err := db.NewInsert().Model(&p).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mustEquity(t, db, l.portfolio, calendar.NewDate(2026, 2, 2), "100")
		mustSynced(t, db, l.portfolio)
		mustFollower(t, db, s, l.profile)
		d, err := s.LeaderBySlug(ctx, l.slug)
		if err != nil {
			t.Fatal(err)
		}
		wantMonthly := []copytrading.Month{{Month: "2026-01", Return: 0.005}, {Month: "2026-02", Return: -0.00497512}} // 100/100.5 − 1, to 8 places
		if diff := cmp.Diff(wantMonthly, d.Monthly, approx); diff != "" {
			t.Errorf("monthly returns mismatch (-want +got):\n%s", diff)
		}
		// Of 10,610: 500 is 4.71 %, 10 is 0.09 %; the top ten only.
		want := []copytrading.Holding{{Symbol: "ACME", AllocationPct: decimal.RequireFromString("4.71")}}
		for i := range copytrading.TopHoldings - 1 {
			want = append(want, copytrading.Holding{Symbol: fmt.Sprintf("X%02d", i), AllocationPct: decimal.RequireFromString("0.09")})
		}
		if diff := cmp.Diff(want, d.TopHoldings); diff != "" {
			t.Errorf("top holdings mismatch (-want +got):\n%s", diff)
		}
		if d.Slug != l.slug || d.Followers != 1 || !d.Verified || !cmp.Equal(d.TotalReturn, 0.0, cmpopts.EquateApprox(0, 1e-12)) {
			t.Errorf("LeaderBySlug() = %s, %d followers, verified %v, total return %v; want %s, 1, true, 0",
				d.Slug, d.Followers, d.Verified, d.TotalReturn, l.slug)
		}
		if _, err := s.LeaderBySlug(ctx, "no-such-leader"); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("LeaderBySlug(no-such-leader) = %v, want not found", err)
		}
	})

	t.Run("figures that do not exist yet", func(t *testing.T) {
		// Published minutes ago, with one day of history: no return, so
		// no Sharpe ratio and no drawdown; a day later, one return: a
		// drawdown of 0 but still no Sharpe ratio. Neither is a made-up
		// 0, and the list by Sharpe ratio puts them after every leader
		// that has one.
		fresh := mustPublished(t, db, s, "100")
		one := mustPublished(t, db, s, "100", "101")
		d, err := s.LeaderBySlug(ctx, fresh.slug)
		if err != nil {
			t.Fatal(err)
		}
		if d.SharpeRatio != nil || d.MaxDrawdown != nil || d.TotalReturn != 0 || len(d.Monthly) != 0 {
			t.Errorf("a new leader: Sharpe %v, drawdown %v, total return %v, %d months; want nil, nil, 0, none",
				d.SharpeRatio, d.MaxDrawdown, d.TotalReturn, len(d.Monthly))
		}
		d, err = s.LeaderBySlug(ctx, one.slug)
		if err != nil {
			t.Fatal(err)
		}
		if d.SharpeRatio != nil || d.MaxDrawdown == nil || *d.MaxDrawdown != 0 || d.TotalReturn != 0.01 {
			t.Errorf("one return: Sharpe %v, drawdown %v, total return %v; want nil, 0, 0.01", d.SharpeRatio, d.MaxDrawdown, d.TotalReturn)
		}
		list, _, err := s.Leaders(ctx, copytrading.LeaderFilter{SortBy: copytrading.SortSharpeRatio, Page: 1, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		seen, none := map[string]bool{}, false
		for _, l := range list {
			seen[l.Slug] = true
			if l.SharpeRatio == nil {
				none = true
			} else if none {
				t.Errorf("Leaders(by Sharpe ratio): %s (%v) after a leader without one", l.Slug, *l.SharpeRatio)
			}
		}
		if !seen[fresh.slug] || !seen[one.slug] {
			t.Errorf("Leaders(by Sharpe ratio) leaves out %s or %s", fresh.slug, one.slug)
		}
	})

	t.Run("transactions", func(t *testing.T) {
		l := mustPublished(t, db, s)
		at := time.Date(2026, 3, 2, 15, 30, 0, 0, time.UTC)
		mustFill(t, db, l.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "10", At: at})
		mustFill(t, db, l.portfolio, leaderFill{Seq: 2, Side: "sell", Qty: "4", At: at.Add(time.Hour)})
		got, err := s.Transactions(ctx, l.slug)
		if err != nil {
			t.Fatal(err)
		}
		price := decimal.RequireFromString(fillPrice)
		want := []copytrading.Transaction{
			{ID: "f2", Symbol: "ACME", Side: "sell", Quantity: decimal.New(4, 0), Price: price, ExecutedAt: at.Add(time.Hour), Verified: true},
			{ID: "f1", Symbol: "ACME", Side: "buy", Quantity: decimal.New(10, 0), Price: price, ExecutedAt: at, Verified: true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Transactions() mismatch (-want +got):\n%s", diff)
		}
		if _, err := s.Transactions(ctx, "no-such-leader"); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Transactions(no-such-leader) = %v, want not found", err)
		}
	})

	t.Run("publish refused", func(t *testing.T) {
		taken := mustPublished(t, db, s)
		user, _, portfolio := mustAccount(t, db, "refused-"+uuid.NewString()[:8]+"@example.com", "10000")
		tests := []struct {
			name      string
			user      uuid.UUID
			in        copytrading.PublishInput
			wantErr   error
			wantParam string // of a *tradekit.ParamError
		}{
			{name: "bad slug", user: user, in: copytrading.PublishInput{PortfolioID: portfolio, DisplayName: "N", Slug: "Not A Slug"},
				wantErr: tradekit.ErrInvalid, wantParam: "slug"},
			{name: "no name", user: user, in: copytrading.PublishInput{PortfolioID: portfolio, DisplayName: "  ", Slug: "no-name"},
				wantErr: tradekit.ErrInvalid, wantParam: "displayName"},
			{name: "long name", user: user, in: copytrading.PublishInput{PortfolioID: portfolio, DisplayName: strings.Repeat("é", copytrading.MaxDisplayName+1), Slug: "long-name"},
				wantErr: tradekit.ErrInvalid, wantParam: "displayName"},
			{name: "long bio", user: user, in: copytrading.PublishInput{PortfolioID: portfolio, DisplayName: "N", Slug: "long-bio", Bio: strings.Repeat("b", copytrading.MaxBio+1)},
				wantErr: tradekit.ErrInvalid, wantParam: "bio"},
			{name: "another's portfolio", user: user, in: copytrading.PublishInput{PortfolioID: taken.portfolio, DisplayName: "N", Slug: "not-mine"},
				wantErr: tradekit.ErrNotFound},
			{name: "slug taken", user: user, in: copytrading.PublishInput{PortfolioID: portfolio, DisplayName: "N", Slug: taken.slug},
				wantErr: tradekit.ErrConflict},
			{name: "published already", user: taken.user, in: copytrading.PublishInput{PortfolioID: taken.portfolio, DisplayName: "N", Slug: "again-" + taken.slug},
				wantErr: tradekit.ErrConflict},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.Publish(ctx, tt.user, tt.in)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Publish() = %v, want %v", err, tt.wantErr)
				}
				var pe *tradekit.ParamError
				if errors.As(err, &pe) != (tt.wantParam != "") || pe != nil && pe.Param != tt.wantParam {
					t.Errorf("Publish() = %v, want a parameter error on %q", err, tt.wantParam)
				}
			})
		}
	})

	t.Run("unpublish", func(t *testing.T) {
		l := mustPublished(t, db, s)
		plain := mustFollower(t, db, s, l.profile)
		copierUser, _, _ := mustAccount(t, db, "copier-"+uuid.NewString()[:8]+"@example.com", "10000")
		copier, err := s.Follow(ctx, copierUser, copytrading.FollowInput{LeaderProfileID: l.profile, AutoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Unpublish(ctx, l.user)
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != l.profile || p.UnpublishedAt == nil {
			t.Errorf("Unpublish() = %s unpublished at %v, want %s unpublished", p.ID, p.UnpublishedAt, l.profile)
		}
		// Every follow stops, whatever its auto-sync, and says why; it
		// stays listed; every follower is told.
		for _, f := range []copytrading.Follow{plain, copier} {
			got := mustFollowRow(t, db, f.ID)
			if got.AutoSync || got.StoppedReason != copytrading.StoppedUnpublished || got.UnfollowedAt != nil {
				t.Errorf("follow with auto-sync %v: now %v, stopped reason %q, unfollowed at %v; want off, %q, live",
					f.AutoSync, got.AutoSync, got.StoppedReason, got.UnfollowedAt, copytrading.StoppedUnpublished)
			}
			want := []note{{copytrading.KindLeaderUnpublished, fmt.Sprintf("Pub %s (%s) unpublished their leader profile; "+
				"your follow has stopped: no more copies or trade notifications from it", strings.TrimPrefix(l.slug, "pub-"), l.slug)}}
			if diff := cmp.Diff(want, mustNotes(t, s, f.UserID)); diff != "" {
				t.Errorf("notifications mismatch (-want +got):\n%s", diff)
			}
			list, err := s.Following(ctx, f.UserID)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].ID != f.ID || list[0].StoppedReason != copytrading.StoppedUnpublished || list[0].LeaderSlug != l.slug {
				t.Errorf("Following() = %+v, want the stopped follow of %s", list, l.slug)
			}
		}
		// Auto-sync cannot be turned on again; the other settings can
		// change, and the follow keeps its reason.
		on, off := true, false
		if _, err := s.UpdateFollow(ctx, copierUser, copier.ID, copytrading.FollowPatch{AutoSync: &on}); !errors.Is(err, tradekit.ErrConflict) ||
			!strings.Contains(err.Error(), "unpublished") {
			t.Errorf("UpdateFollow(auto-sync on) = %v, want a conflict saying the leader unpublished", err)
		}
		f, err := s.UpdateFollow(ctx, plain.UserID, plain.ID, copytrading.FollowPatch{Notifications: &off})
		if err != nil || f.Notifications || f.StoppedReason != copytrading.StoppedUnpublished {
			t.Errorf("UpdateFollow(notifications off) = %+v, %v; want notifications off and the reason kept", f, err)
		}
		if got := mustFollowRow(t, db, copier.ID); got.AutoSync || got.StoppedReason != copytrading.StoppedUnpublished {
			t.Errorf("the refused update changed the follow: auto-sync %v, reason %q", got.AutoSync, got.StoppedReason)
		}
		if _, err := s.Unpublish(ctx, l.user); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Unpublish() again = %v, want not found", err)
		}
		if _, err := s.LeaderBySlug(ctx, l.slug); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("LeaderBySlug() of an unpublished leader = %v, want not found", err)
		}
		if _, err := s.Transactions(ctx, l.slug); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Transactions() of an unpublished leader = %v, want not found", err)
		}
		// The slug is free again.
		if _, err := s.Publish(ctx, l.user, copytrading.PublishInput{PortfolioID: l.portfolio, DisplayName: "Again", Slug: l.slug}); err != nil {
			t.Errorf("Publish() after Unpublish() = %v", err)
		}
	})
}
