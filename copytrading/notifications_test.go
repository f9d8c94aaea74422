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
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/testkit"
)

// testNotifications pages through a user's notifications and marks them
// read.
func testNotifications(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	clk := testkit.NewClock(t0.Add(time.Hour))
	s := copytrading.New(db, copytrading.Config{Now: clk.Now})
	user, _, _ := mustAccount(t, db, "reader-"+uuid.NewString()[:8]+"@example.com", "10000")
	other, _, _ := mustAccount(t, db, "other-"+uuid.NewString()[:8]+"@example.com", "10000")
	ids := map[string]uuid.UUID{}
	for i, n := range []struct {
		user    uuid.UUID
		message string
	}{{user, "first"}, {user, "second"}, {user, "third"}, {other, "other's"}} {
		row := copytrading.Notification{ID: uuid.New(), UserID: n.user, Kind: copytrading.KindLeaderTrade, Message: n.message, Data: "{}",
			CreatedAt: t0.Add(time.Duration(i) * time.Minute)}
		if _, err := db.NewInsert().Model(&row).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		ids[n.message] = row.ID
	}
	messages := func(t *testing.T, user uuid.UUID, unread bool, page, limit int) ([]string, int) {
		t.Helper()
		list, total, err := s.Notifications(ctx, user, unread, page, limit)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, n := range list {
			out = append(out, n.Message)
		}
		return out, total
	}

	t.Run("pages", func(t *testing.T) {
		tests := []struct {
			name        string
			page, limit int
			want        []string
		}{
			{name: "first page", page: 1, limit: 2, want: []string{"third", "second"}},
			{name: "second page", page: 2, limit: 2, want: []string{"first"}},
			{name: "past the end", page: 3, limit: 2, want: []string{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, total := messages(t, user, false, tt.page, tt.limit)
				if diff := cmp.Diff(tt.want, got); diff != "" || total != 3 {
					t.Errorf("Notifications(page %d of %d): total %d, want 3; mismatch (-want +got):\n%s", tt.page, tt.limit, total, diff)
				}
			})
		}
	})

	t.Run("marked read once", func(t *testing.T) {
		read := t0.Add(2 * time.Hour)
		for _, now := range []time.Time{read, read.Add(time.Hour)} {
			clk.Set(now)
			n, err := s.MarkRead(ctx, user, ids["second"])
			if err != nil {
				t.Fatal(err)
			}
			if n.ID != ids["second"] || n.ReadAt == nil || !n.ReadAt.Equal(read) {
				t.Errorf("MarkRead() at %v = %s read at %v, want %s read at %v", now, n.ID, n.ReadAt, ids["second"], read)
			}
		}
		got, total := messages(t, user, true, 1, 10)
		if diff := cmp.Diff([]string{"third", "first"}, got); diff != "" || total != 2 {
			t.Errorf("unread: total %d, want 2; mismatch (-want +got):\n%s", total, diff)
		}
	})

	t.Run("not the user's", func(t *testing.T) {
		for _, id := range []uuid.UUID{ids["other's"], uuid.New()} {
			if _, err := s.MarkRead(ctx, user, id); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("MarkRead(%s) = %v, want not found", id, err)
			}
		}
		if got, total := messages(t, other, true, 1, 10); total != 1 {
			t.Errorf("the other user's unread notifications: %v", got)
		}
	})
}
