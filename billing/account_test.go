package billing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestInvitations(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		admin := mustUser(t, db, "admin@example.com", "pro")
		if admin.AccountID != admin.ID {
			t.Fatalf("a user created alone has account %s, want their own id %s", admin.AccountID, admin.ID)
		}
		member := mustUser(t, db, "member@example.com", "free")
		admin.IsAdmin = true
		if err := st.UpdateUser(ctx, admin); err != nil {
			t.Fatal(err)
		}

		if _, err := st.Invite(ctx, member, &billing.User{Email: "x@example.com", Name: "X"}, now, time.Hour); !errors.Is(err, tradekit.ErrForbidden) {
			t.Errorf("a non-administrator's invitation: %v, want ErrForbidden", err)
		}
		if _, err := st.Invite(ctx, admin, &billing.User{Email: "MEMBER@example.com", Name: "M"}, now, time.Hour); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("inviting a taken email: %v, want ErrConflict", err)
		}
		bob := billing.User{Email: "Bob@example.com", Name: "Bob"}
		token, err := st.Invite(ctx, admin, &bob, now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if bob.AccountID != admin.AccountID || bob.PlanID != admin.PlanID || bob.IsAdmin {
			t.Errorf("invited user %+v: want the admin's account and plan, not an administrator", bob)
		}
		if got, err := st.Invited(ctx, token, now.Add(59*time.Minute)); err != nil || got.ID != bob.ID {
			t.Errorf("Invited = %v, %v; want bob", got.ID, err)
		}
		if _, err := st.Invited(ctx, token, now.Add(time.Hour)); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("an expired invitation: %v, want ErrNotFound", err)
		}
		if _, err := st.AcceptInvite(ctx, token, "h", now.Add(time.Hour)); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("accepting an expired invitation: %v, want ErrNotFound", err)
		}

		// A new invitation replaces the old one, which no longer works.
		token2, err := st.Reinvite(ctx, admin, bob.ID, now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Invited(ctx, token, now); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("the replaced invitation: %v, want ErrNotFound", err)
		}
		hash, err := billing.HashPassword("correct horse battery", cheap)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.AcceptInvite(ctx, token2, hash, now)
		if err != nil || got.ID != bob.ID || got.PasswordHash == nil || *got.PasswordHash != hash {
			t.Fatalf("AcceptInvite = %+v, %v", got, err)
		}
		if _, err := st.AcceptInvite(ctx, token2, hash, now); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("accepting twice: %v, want ErrNotFound", err)
		}
		if _, err := st.SignIn(ctx, "bob@example.com", "correct horse battery", cheap); err != nil {
			t.Errorf("signing in after accepting: %v", err)
		}
		if _, err := st.Reinvite(ctx, admin, bob.ID, now, time.Hour); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("reinviting a member with a password: %v, want ErrConflict", err)
		}
		if _, err := st.Reinvite(ctx, admin, member.ID, now, time.Hour); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("reinviting a user of another account: %v, want ErrNotFound", err)
		}

		members, err := st.Members(ctx, admin.AccountID)
		if err != nil || len(members) != 2 || members[0].ID != admin.ID || members[1].ID != bob.ID {
			t.Errorf("Members = %v, %v; want admin then bob", members, err)
		}

		// The account's keys are its members' keys, and only theirs.
		ka, _, _ := st.CreateKey(ctx, admin.ID, "a", now)
		kb, _, _ := st.CreateKey(ctx, bob.ID, "b", now.Add(time.Second))
		st.CreateKey(ctx, member.ID, "other account", now)
		keys, err := st.AccountKeys(ctx, admin.AccountID)
		if err != nil || len(keys) != 2 || keys[0].ID != ka.ID || keys[0].OwnerEmail != "admin@example.com" ||
			keys[1].ID != kb.ID || keys[1].OwnerEmail != "bob@example.com" || keys[1].Name != "b" {
			t.Errorf("AccountKeys = %+v, %v", keys, err)
		}

		// Expired invitations are cleaned up with the sessions.
		carol := billing.User{Email: "carol@example.com", Name: "Carol"}
		if _, err := st.Invite(ctx, admin, &carol, now, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DeleteExpiredSessions(ctx, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.NewRaw("SELECT count(*) FROM invites").Scan(ctx, &n); err != nil || n != 0 {
			t.Errorf("%d invitations left after the cleanup, %v", n, err)
		}
	})
}

func TestUsage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		u := mustUser(t, db, "usage@example.com", "free")
		now := time.Date(2026, 11, 24, 12, 30, 15, 0, time.UTC)
		lim := billing.Limits{PerMinute: 100, PerDay: 1000}
		for _, at := range []time.Time{now.Add(-time.Minute), now, now.Add(10 * time.Second), now.Add(-24 * time.Hour)} {
			if _, err := st.Consume(ctx, u.ID, lim, at); err != nil {
				t.Fatal(err)
			}
		}
		st.Consume(ctx, uuid.New(), lim, now) // someone else's
		got, err := st.Usage(ctx, u.ID, now.Add(20*time.Second))
		want := billing.CurrentUsage{Minute: 2, Day: 3,
			MinuteReset: time.Date(2026, 11, 24, 12, 31, 0, 0, time.UTC), DayReset: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
		if err != nil || got != want {
			t.Errorf("Usage = %+v, %v; want %+v", got, err, want)
		}
	})
}

// TestLimiterUsage checks that the usage a Limiter reports leaves out the
// requests it counted ahead and has not spent.
func TestLimiterUsage(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	u := mustUser(t, db, "lease@example.com", "free")
	now := time.Date(2026, 11, 24, 12, 30, 15, 0, time.UTC)
	lim := billing.Limits{PerMinute: 1000, PerDay: 100000}
	l := billing.NewLimiter(db)
	for range 3 {
		if use, err := l.Consume(ctx, u.ID, lim, now); err != nil || !use.Allowed {
			t.Fatal(use, err)
		}
	}
	stored, err := billing.NewStore(db).Usage(ctx, u.ID, now)
	if err != nil || stored.Minute <= 3 {
		t.Fatalf("the database counts %d this minute, %v; want more than 3 (a lease)", stored.Minute, err)
	}
	got, err := l.Usage(ctx, u.ID, now)
	if err != nil || got.Minute != 3 || got.Day != 3 {
		t.Errorf("Limiter.Usage = %+v, %v; want 3 this minute and today", got, err)
	}
	if got, _ := l.Usage(ctx, u.ID, now.Add(time.Minute)); got.Minute != 0 || got.Day != stored.Day {
		t.Errorf("the next minute, before a flush: %+v; want 0 this minute and the day as stored", got)
	}
}
