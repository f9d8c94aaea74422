package copytrading_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/testkit"
)

// backtestRow is a row of backtests, the results package
// backtest/backtestdb stores.
type backtestRow struct {
	bun.BaseModel `bun:"table:backtests"`

	ID           uuid.UUID `bun:"id,pk"`
	UserID       uuid.UUID `bun:"user_id"`
	StrategyHash string    `bun:"strategy_hash"`
	Document     string    `bun:"document"`
	TotalReturn  *float64  `bun:"total_return"`
	SharpeRatio  *float64  `bun:"sharpe_ratio"`
	CreatedAt    time.Time `bun:"created_at"`
}

// testStrategies publishes strategies, lists them with their authors and
// latest backtests, and unpublishes them.
func testStrategies(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	clk := testkit.NewClock(t0)
	s := copytrading.New(db, copytrading.Config{Now: clk.Now})
	author := mustPublished(t, db, s) // a leader
	plain, _, _ := mustAccount(t, db, "plain-"+uuid.NewString()[:8]+"@example.com", "10000")

	t.Run("refused", func(t *testing.T) {
		tests := []struct {
			name, hash, strategy, description string
			wantParam                         string
		}{
			{name: "empty hash", strategy: "S", wantParam: "strategyHash"},
			{name: "bad hash", hash: "sha256 abc", strategy: "S", wantParam: "strategyHash"},
			{name: "long hash", hash: strings.Repeat("a", 129), strategy: "S", wantParam: "strategyHash"},
			{name: "no name", hash: "h", strategy: " \t", wantParam: "name"},
			{name: "long name", hash: "h", strategy: strings.Repeat("n", copytrading.MaxStrategyName+1), wantParam: "name"},
			{name: "long description", hash: "h", strategy: "S", description: strings.Repeat("d", copytrading.MaxStrategyDescription+1),
				wantParam: "description"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.PublishStrategy(ctx, plain, tt.hash, tt.strategy, tt.description)
				var pe *tradekit.ParamError
				if !errors.As(err, &pe) || pe.Param != tt.wantParam || !errors.Is(err, tradekit.ErrInvalid) {
					t.Errorf("PublishStrategy() = %v, want an invalid %s", err, tt.wantParam)
				}
			})
		}
	})

	t.Run("published, listed and unpublished", func(t *testing.T) {
		mustStrategy := func(user uuid.UUID, at time.Time, hash, name string) copytrading.Strategy {
			t.Helper()
			clk.Set(at)
			st, err := s.PublishStrategy(ctx, user, hash, name, "about "+name)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		first := mustStrategy(author.user, t0, "sha256:abc", "  Trend  ")
		want := copytrading.Strategy{ID: first.ID, UserID: author.user, StrategyHash: "sha256:abc", Name: "Trend", Description: "about   Trend  ",
			PublishedAt: t0}
		if diff := cmp.Diff(want, first); diff != "" {
			t.Errorf("PublishStrategy() mismatch (-want +got):\n%s", diff)
		}
		mustStrategy(plain, t0.Add(time.Minute), "sha256:abc", "Same hash")
		mustStrategy(author.user, t0.Add(2*time.Minute), "h-2", "Second")
		if _, err := s.PublishStrategy(ctx, author.user, "sha256:abc", "Again", ""); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("PublishStrategy() of a published hash = %v, want a conflict", err)
		}
		// The author's backtest of the hash (one per user and hash: a
		// rerun replaces it), its figures rounded to 8 places (0.1 + 0.2
		// is 0.30000000000000004 in float64).
		newer, third := 0.1+0.2, 1.0/3
		b := backtestRow{ID: uuid.New(), UserID: author.user, StrategyHash: "sha256:abc", Document: "{}", TotalReturn: &newer,
			SharpeRatio: &third, CreatedAt: t0.Add(time.Hour)}
		if _, err := db.NewInsert().Model(&b).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		type row struct {
			Name, Hash               string
			AuthorSlug               *string
			TotalReturn, SharpeRatio *float64
		}
		list := func() []row {
			t.Helper()
			got, err := s.Strategies(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out := []row{}
			for _, v := range got {
				out = append(out, row{v.Name, v.StrategyHash, v.AuthorSlug, v.TotalReturn, v.SharpeRatio})
			}
			return out
		}
		slug := author.slug
		rounded, roundedThird := 0.3, 0.33333333
		wantList := []row{
			{Name: "Second", Hash: "h-2", AuthorSlug: &slug},
			{Name: "Same hash", Hash: "sha256:abc"},
			{Name: "Trend", Hash: "sha256:abc", AuthorSlug: &slug, TotalReturn: &rounded, SharpeRatio: &roundedThird},
		}
		if diff := cmp.Diff(wantList, list()); diff != "" {
			t.Errorf("Strategies() mismatch (-want +got):\n%s", diff)
		}

		if _, err := s.UnpublishStrategy(ctx, plain, first.ID); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("UnpublishStrategy() of another's strategy = %v, want not found", err)
		}
		at := t0.Add(time.Hour)
		clk.Set(at)
		got, err := s.UnpublishStrategy(ctx, author.user, first.ID)
		if err != nil || got.ID != first.ID || got.UnpublishedAt == nil || !got.UnpublishedAt.Equal(at) {
			t.Errorf("UnpublishStrategy() = %+v, %v; want it unpublished at %v", got, err, at)
		}
		if _, err := s.UnpublishStrategy(ctx, author.user, first.ID); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("UnpublishStrategy() again = %v, want not found", err)
		}
		if diff := cmp.Diff(wantList[:2], list()); diff != "" {
			t.Errorf("Strategies() after unpublishing mismatch (-want +got):\n%s", diff)
		}
		// The hash can be published again.
		mustStrategy(author.user, t0.Add(2*time.Hour), "sha256:abc", "Trend again")
	})
}
