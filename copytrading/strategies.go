package copytrading

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/backtest/backtestdb"
	"github.com/tradekit/tradekit/internal/database"
)

// hashPattern is a strategy hash: 1–128 characters of letters, digits and
// ":", "_", "-". Tradekit treats it as opaque.
var hashPattern = regexp.MustCompile(`^[A-Za-z0-9:_-]{1,128}$`)

// The limits of a strategy's text.
const (
	MaxStrategyName        = 100
	MaxStrategyDescription = 2000
)

// PublishStrategy publishes a strategy by its hash. The error wraps
// [tradekit.ErrInvalid] for a bad hash, name or description, and
// [tradekit.ErrConflict] when the user has the hash published already.
func (s *Service) PublishStrategy(ctx context.Context, userID uuid.UUID, hash, name, description string) (Strategy, error) {
	name = strings.TrimSpace(name)
	switch n := utf8.RuneCountInString(name); {
	case !hashPattern.MatchString(hash):
		return Strategy{}, &tradekit.ParamError{Param: "strategyHash",
			Msg: "must be 1 to 128 characters of letters, digits, ':', '_' and '-', not " + tradekit.Quote(hash)}
	case n == 0:
		return Strategy{}, &tradekit.ParamError{Param: "name", Msg: "is required"}
	case n > MaxStrategyName:
		return Strategy{}, &tradekit.ParamError{Param: "name", Msg: fmt.Sprintf("must be at most %d characters, not %d", MaxStrategyName, n)}
	case utf8.RuneCountInString(description) > MaxStrategyDescription:
		return Strategy{}, &tradekit.ParamError{Param: "description", Msg: fmt.Sprintf("must be at most %d characters", MaxStrategyDescription)}
	}
	st := Strategy{ID: uuid.New(), UserID: userID, StrategyHash: hash, Name: name, Description: description, PublishedAt: s.clock()}
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		taken, err := tx.NewSelect().Model((*Strategy)(nil)).
			Where("user_id = ? AND strategy_hash = ? AND unpublished_at IS NULL", userID, hash).Exists(ctx)
		if err != nil {
			return fmt.Errorf("copytrading: strategies: %w", err)
		}
		if !taken {
			_, err = tx.NewInsert().Model(&st).Exec(ctx)
		}
		if taken || err != nil && database.IsUniqueViolation(err) {
			return conflict("you have published the strategy %s already", tradekit.Quote(hash))
		}
		if err != nil {
			return fmt.Errorf("copytrading: publish strategy: %w", err)
		}
		return nil
	})
	return st, err
}

// StrategyView is a published strategy as the list shows it: with its
// author's slug when the author is a published leader, and the figures
// of the author's backtest of the strategy hash run through the API
// (package backtest/backtestdb, [backtestdb.Store.Figures]), rounded to
// [FigurePlaces] places as a leader's are; nil without one.
type StrategyView struct {
	Strategy
	AuthorSlug  *string  `bun:"author_slug"`
	TotalReturn *float64 `bun:"-"`
	SharpeRatio *float64 `bun:"-"`
}

// Strategies returns every published strategy, newest first.
func (s *Service) Strategies(ctx context.Context) ([]StrategyView, error) {
	out := []StrategyView{}
	err := s.db.NewSelect().TableExpr("published_strategies AS ps").ColumnExpr("ps.*").
		ColumnExpr("(SELECT lp.slug FROM leader_profiles AS lp WHERE lp.user_id = ps.user_id AND lp.unpublished_at IS NULL) AS author_slug").
		Where("ps.unpublished_at IS NULL").OrderExpr("ps.published_at DESC, ps.id").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("copytrading: strategies: %w", err)
	}
	keys := make([]backtestdb.StrategyKey, len(out))
	for i, v := range out {
		keys[i] = backtestdb.StrategyKey{UserID: v.UserID, Hash: v.StrategyHash}
	}
	figures, err := backtestdb.NewStore(s.db).Figures(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("copytrading: strategies: %w", err)
	}
	for i, k := range keys {
		f := figures[k]
		out[i].TotalReturn, out[i].SharpeRatio = roundFigure(f.TotalReturn), roundFigure(f.SharpeRatio)
	}
	return out, nil
}

// roundFigure returns *f rounded to [FigurePlaces] places, nil for nil.
func roundFigure(f *float64) *float64 {
	if f == nil {
		return nil
	}
	r := round(*f)
	return &r
}

// UnpublishStrategy unpublishes the user's strategy id. The error wraps
// [tradekit.ErrNotFound] for a strategy that is not the user's or is
// unpublished already.
func (s *Service) UnpublishStrategy(ctx context.Context, userID, id uuid.UUID) (Strategy, error) {
	st := Strategy{ID: id}
	now := s.clock()
	res, err := s.db.NewUpdate().Model(&st).Set("unpublished_at = ?", now).
		Where("id = ? AND user_id = ? AND unpublished_at IS NULL", id, userID).Exec(ctx)
	if err != nil {
		return Strategy{}, fmt.Errorf("copytrading: unpublish strategy: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return Strategy{}, notFound("strategy %s not found", id)
	}
	st.UnpublishedAt = &now
	return st, nil
}
