package copytrading_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/testkit"
)

// mustConnection stores a connection of the user with the status.
func mustConnection(tb testing.TB, db bun.IDB, user uuid.UUID, status string) uuid.UUID {
	tb.Helper()
	now := time.Now().UTC()
	c := connect.Connection{ID: uuid.New(), UserID: user, Provider: "paper", Status: status, RedirectURL: "https://x.example/", CreatedAt: now, UpdatedAt: now}
	if _, err := db.NewInsert().Model(&c).Exec(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return c.ID
}

// mustStatus sets the connection's status.
func mustStatus(tb testing.TB, db bun.IDB, conn uuid.UUID, status string) {
	tb.Helper()
	if _, err := db.NewUpdate().Model((*connect.Connection)(nil)).Set("status = ?", status).Where("id = ?", conn).Exec(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// testFollowing follows a leader, changes the follow and ends it, and
// checks what is refused and why.
func testFollowing(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	clk := testkit.NewClock(t0)
	s := copytrading.New(db, copytrading.Config{Now: clk.Now})
	leader := mustPublished(t, db, s)
	newUser := func(t *testing.T) (user, conn uuid.UUID) {
		t.Helper()
		user, conn, _ = mustAccount(t, db, "fan-"+uuid.NewString()[:8]+"@example.com", "10000")
		return user, conn
	}

	t.Run("refused", func(t *testing.T) {
		tests := []struct {
			name      string
			setup     func(t *testing.T, user, conn uuid.UUID) copytrading.FollowInput
			wantErr   error
			wantParam string // of a *tradekit.ParamError
		}{
			{name: "leader not published", wantErr: tradekit.ErrNotFound,
				setup: func(*testing.T, uuid.UUID, uuid.UUID) copytrading.FollowInput {
					return copytrading.FollowInput{LeaderProfileID: uuid.New()}
				}},
			{name: "followed already", wantErr: tradekit.ErrConflict,
				setup: func(t *testing.T, user, _ uuid.UUID) copytrading.FollowInput {
					in := copytrading.FollowInput{LeaderProfileID: leader.profile}
					if _, err := s.Follow(ctx, user, in); err != nil {
						t.Fatal(err)
					}
					return in
				}},
			{name: "another's connection", wantErr: tradekit.ErrNotFound,
				setup: func(*testing.T, uuid.UUID, uuid.UUID) copytrading.FollowInput {
					return copytrading.FollowInput{LeaderProfileID: leader.profile, Controls: copytrading.ControlsPatch{ConnectionID: &leader.conn}}
				}},
			{name: "auto-sync through a disconnected connection", wantErr: tradekit.ErrConflict,
				setup: func(t *testing.T, user, conn uuid.UUID) copytrading.FollowInput {
					mustStatus(t, db, conn, connect.Disconnected)
					return copytrading.FollowInput{LeaderProfileID: leader.profile, AutoSync: true, Controls: copytrading.ControlsPatch{ConnectionID: &conn}}
				}},
			{name: "auto-sync without an active connection", wantErr: tradekit.ErrConflict,
				setup: func(t *testing.T, user, conn uuid.UUID) copytrading.FollowInput {
					mustStatus(t, db, conn, connect.Pending)
					return copytrading.FollowInput{LeaderProfileID: leader.profile, AutoSync: true}
				}},
			{name: "auto-sync with two active connections", wantErr: tradekit.ErrInvalid, wantParam: "connectionId",
				setup: func(t *testing.T, user, _ uuid.UUID) copytrading.FollowInput {
					mustConnection(t, db, user, connect.Active)
					return copytrading.FollowInput{LeaderProfileID: leader.profile, AutoSync: true}
				}},
			{name: "no allocation", wantErr: tradekit.ErrInvalid, wantParam: "allocationPct",
				setup: func(*testing.T, uuid.UUID, uuid.UUID) copytrading.FollowInput {
					return copytrading.FollowInput{LeaderProfileID: leader.profile, Controls: copytrading.ControlsPatch{AllocationPct: pct("0")}}
				}},
			{name: "scaling over 1000 %", wantErr: tradekit.ErrInvalid, wantParam: "scalingPct",
				setup: func(*testing.T, uuid.UUID, uuid.UUID) copytrading.FollowInput {
					return copytrading.FollowInput{LeaderProfileID: leader.profile, Controls: copytrading.ControlsPatch{ScalingPct: pct("1000.0001")}}
				}},
			{name: "maximum position over 100 %", wantErr: tradekit.ErrInvalid, wantParam: "maxPositionPct",
				setup: func(*testing.T, uuid.UUID, uuid.UUID) copytrading.FollowInput {
					return copytrading.FollowInput{LeaderProfileID: leader.profile, Controls: copytrading.ControlsPatch{MaxPositionPct: pct("101")}}
				}},
			{name: "stop-loss with 5 decimals", wantErr: tradekit.ErrInvalid, wantParam: "copyStopLossPct",
				setup: func(*testing.T, uuid.UUID, uuid.UUID) copytrading.FollowInput {
					return copytrading.FollowInput{LeaderProfileID: leader.profile, Controls: copytrading.ControlsPatch{CopyStopLossPct: pct("12.00001")}}
				}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				user, conn := newUser(t)
				in := tt.setup(t, user, conn)
				before, err := s.Following(ctx, user)
				if err != nil {
					t.Fatal(err)
				}
				_, err = s.Follow(ctx, user, in)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Follow() = %v, want %v", err, tt.wantErr)
				}
				var pe *tradekit.ParamError
				if errors.As(err, &pe) != (tt.wantParam != "") || pe != nil && pe.Param != tt.wantParam {
					t.Errorf("Follow() = %v, want a parameter error on %q", err, tt.wantParam)
				}
				if after, err := s.Following(ctx, user); err != nil || len(after) != len(before) {
					t.Errorf("the refused follow was recorded: %d follows before, %d after (%v)", len(before), len(after), err)
				}
			})
		}
	})

	t.Run("updated", func(t *testing.T) {
		user, conn := newUser(t)
		clk.Set(t0)
		f, err := s.Follow(ctx, user, copytrading.FollowInput{LeaderProfileID: leader.profile, Notifications: true})
		if err != nil {
			t.Fatal(err)
		}
		// Auto-sync was stopped once.
		if _, err := db.NewUpdate().Table("follows").Set("stopped_reason = 'stopped'").Where("id = ?", f.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		t1 := t0.Add(time.Hour)
		clk.Set(t1)
		on, off := true, false
		got, err := s.UpdateFollow(ctx, user, f.ID, copytrading.FollowPatch{AutoSync: &on, Notifications: &off,
			Controls: copytrading.ControlsPatch{AllocationPct: pct("50"), ScalingPct: pct("200"), MaxPositionPct: pct("30"), CopyStopLossPct: pct("15.5")}})
		if err != nil {
			t.Fatal(err)
		}
		// The only active connection is chosen, copying starts over
		// from now, and the stop is forgotten.
		want := f
		want.AutoSync, want.Notifications, want.CopySince, want.UpdatedAt, want.StoppedReason = true, false, t1, t1, ""
		want.Controls = copytrading.Controls{ConnectionID: &conn, AllocationPct: *pct("50"), ScalingPct: *pct("200"), MaxPositionPct: *pct("30"),
			CopyStopLossPct: *pct("15.5")}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("UpdateFollow() mismatch (-want +got):\n%s", diff)
		}
		list, err := s.Following(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		wantList := []copytrading.FollowView{{Follow: want, LeaderSlug: leader.slug, LeaderDisplayName: "Pub " + leader.slug[len("pub-"):]}}
		if diff := cmp.Diff(wantList, list); diff != "" {
			t.Errorf("Following() mismatch (-want +got):\n%s", diff)
		}

		// Auto-sync on again: copying does not start over.
		clk.Set(t1.Add(time.Hour))
		if got, err = s.UpdateFollow(ctx, user, f.ID, copytrading.FollowPatch{AutoSync: &on}); err != nil || !got.CopySince.Equal(t1) {
			t.Errorf("UpdateFollow(auto-sync on again) = copying since %v (%v), want since %v", got.CopySince, err, t1)
		}
		if _, err := s.UpdateFollow(ctx, user, f.ID, copytrading.FollowPatch{Controls: copytrading.ControlsPatch{ScalingPct: pct("0")}}); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("UpdateFollow(scaling 0) = %v, want invalid", err)
		}
		if _, err := s.UpdateFollow(ctx, leader.user, f.ID, copytrading.FollowPatch{AutoSync: &off}); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("UpdateFollow() of another's follow = %v, want not found", err)
		}
		// Off, then on again through a connection that is no longer
		// active.
		if got, err = s.UpdateFollow(ctx, user, f.ID, copytrading.FollowPatch{AutoSync: &off}); err != nil || got.AutoSync {
			t.Errorf("UpdateFollow(auto-sync off) = auto-sync %v, %v", got.AutoSync, err)
		}
		mustStatus(t, db, conn, connect.Disconnected)
		if _, err := s.UpdateFollow(ctx, user, f.ID, copytrading.FollowPatch{AutoSync: &on}); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("UpdateFollow(auto-sync on, disconnected) = %v, want a conflict", err)
		}
	})

	t.Run("unfollowed", func(t *testing.T) {
		user, _ := newUser(t)
		clk.Set(t0)
		f, err := s.Follow(ctx, user, copytrading.FollowInput{LeaderProfileID: leader.profile, AutoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Unfollow(ctx, leader.user, f.ID); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Unfollow() of another's follow = %v, want not found", err)
		}
		t1 := t0.Add(time.Hour)
		clk.Set(t1)
		got, err := s.Unfollow(ctx, user, f.ID)
		if err != nil || got.AutoSync || got.UnfollowedAt == nil || !got.UnfollowedAt.Equal(t1) {
			t.Errorf("Unfollow() = auto-sync %v, unfollowed at %v (%v); want off, at %v", got.AutoSync, got.UnfollowedAt, err, t1)
		}
		if list, err := s.Following(ctx, user); err != nil || len(list) != 0 {
			t.Errorf("Following() after Unfollow() = %d follows (%v), want none", len(list), err)
		}
		if _, err := s.Unfollow(ctx, user, f.ID); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Unfollow() again = %v, want not found", err)
		}
		on := true
		if _, err := s.UpdateFollow(ctx, user, f.ID, copytrading.FollowPatch{AutoSync: &on}); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("UpdateFollow() of an ended follow = %v, want not found", err)
		}
		// The leader can be followed again.
		if _, err := s.Follow(ctx, user, copytrading.FollowInput{LeaderProfileID: leader.profile}); err != nil {
			t.Errorf("Follow() after Unfollow() = %v", err)
		}
	})
}
