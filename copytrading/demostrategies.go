package copytrading

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/backtest/backtestdb"
	"github.com/tradekit/tradekit/marketdata"
)

// demoBacktestCash is the starting cash of the demo strategies'
// backtests, the demo leaders' own.
const demoBacktestCash = 100_000

// Strategy returns the leader's rule as a backtest strategy: enter an
// asset whose close is above its Lookback-day simple moving average,
// leave it when the close falls below, one equal position per symbol.
// (The backtest fills at the next open, where the simulation of
// [LoadDemoLeaders] trades at the close.)
func (l DemoLeader) Strategy() backtest.Strategy {
	return backtest.Strategy{
		Entry:        fmt.Sprintf("close > sma(close, %d)", l.Lookback),
		Exit:         fmt.Sprintf("close < sma(close, %d)", l.Lookback),
		MaxPositions: len(l.Symbols),
	}
}

// StrategyName returns the name the leader publishes [DemoLeader.Strategy]
// under, as "Trend Hunter: above the 50-day average".
func (l DemoLeader) StrategyName() string {
	return fmt.Sprintf("%s: above the %d-day average", strings.TrimPrefix(l.DisplayName, "Demo: "), l.Lookback)
}

// publishDemoStrategy publishes the leader's strategy for its user, with
// a backtest over the whole stored history of its symbols, unless it is
// published already: the published strategy (of a deterministic id)
// and the backtest result are stored in one transaction. The result is
// stored as the user's, so that the strategies list shows its figures.
func publishDemoStrategy(ctx context.Context, db *bun.DB, l DemoLeader, userID uuid.UUID, now time.Time) error {
	id := uuid.NewSHA1(demoNamespace, []byte("strategy:"+l.Slug))
	exists, err := db.NewSelect().Model((*Strategy)(nil)).Where("id = ?", id).Exists(ctx)
	if err != nil {
		return fmt.Errorf("copytrading: demo strategy of %s: %w", l.Slug, err)
	}
	if exists {
		return nil
	}
	c, err := l.Strategy().Compile()
	if err != nil {
		return fmt.Errorf("copytrading: demo strategy of %s: %w", l.Slug, err)
	}
	u := backtestdb.Universe{Symbols: l.Symbols}
	loaded, err := backtestdb.Load(ctx, marketdata.NewStore(db), u, backtestdb.LoadConfig{})
	if err != nil {
		return fmt.Errorf("copytrading: demo strategy of %s: %w", l.Slug, err)
	}
	rec, err := backtestdb.Run(ctx, c, u, loaded, backtest.Config{Cash: demoBacktestCash}, userID, now)
	if err != nil {
		return fmt.Errorf("copytrading: demo strategy of %s: %w", l.Slug, err)
	}
	st := Strategy{ID: id, UserID: userID, StrategyHash: rec.StrategyHash, Name: l.StrategyName(), PublishedAt: now,
		Description: fmt.Sprintf("SYNTHETIC demo strategy of %s: holds %s (%s) in equal shares. Backtested over the whole "+
			"demo history of its assets, whose prices are synthetic; not real performance.", l.Slug, l.Bio, strings.Join(l.Symbols, ", "))}
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := backtestdb.NewStore(tx).Save(ctx, &rec); err != nil {
			return fmt.Errorf("copytrading: demo strategy of %s: %w", l.Slug, err)
		}
		if _, err := tx.NewInsert().Model(&st).Exec(ctx); err != nil {
			return fmt.Errorf("copytrading: demo strategy of %s: %w", l.Slug, err)
		}
		return nil
	})
}
