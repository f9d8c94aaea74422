package connect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/database"
)

// guardrailsRow is a user's stored guardrails.
type guardrailsRow struct {
	bun.BaseModel `bun:"table:broker_guardrails"`

	UserID              uuid.UUID       `bun:"user_id,pk"`
	MaxDailyTrades      int             `bun:"max_daily_trades"`
	MaxPositionSizePct  decimal.Decimal `bun:"max_position_size_pct"`
	MaxPortfolioRiskPct decimal.Decimal `bun:"max_portfolio_risk_pct"`
	StopLossRequired    bool            `bun:"stop_loss_required"`
	AllowedAssetTypes   string          `bun:"allowed_asset_types"` // comma-separated
	UpdatedAt           time.Time       `bun:"updated_at"`
}

// Guardrails returns the user's guardrails and when they were last set;
// a user who never set any has [brokers.DefaultGuardrails] and a nil
// time.
func (s *Store) Guardrails(ctx context.Context, userID uuid.UUID) (brokers.Guardrails, *time.Time, error) {
	var r guardrailsRow
	err := s.db.NewSelect().Model(&r).Where("user_id = ?", userID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return brokers.DefaultGuardrails(), nil, nil
	}
	if err != nil {
		return brokers.Guardrails{}, nil, fmt.Errorf("connect: guardrails of %s: %w", userID, err)
	}
	return r.guardrails(), &r.UpdatedAt, nil
}

// guardrails returns the guardrails the row holds.
func (r guardrailsRow) guardrails() brokers.Guardrails {
	g := brokers.Guardrails{MaxDailyTrades: r.MaxDailyTrades, MaxPositionSizePct: r.MaxPositionSizePct,
		MaxPortfolioRiskPct: r.MaxPortfolioRiskPct, StopLossRequired: r.StopLossRequired, AllowedAssetTypes: []string{}}
	if r.AllowedAssetTypes != "" {
		g.AllowedAssetTypes = strings.Split(r.AllowedAssetTypes, ",")
	}
	return g
}

// newGuardrailsRow returns the row of the user's guardrails g, set at now.
func newGuardrailsRow(userID uuid.UUID, g brokers.Guardrails, now time.Time) guardrailsRow {
	return guardrailsRow{UserID: userID, MaxDailyTrades: g.MaxDailyTrades, MaxPositionSizePct: g.MaxPositionSizePct,
		MaxPortfolioRiskPct: g.MaxPortfolioRiskPct, StopLossRequired: g.StopLossRequired,
		AllowedAssetTypes: strings.Join(g.AllowedAssetTypes, ","), UpdatedAt: now.UTC()}
}

// SaveGuardrails stores the user's guardrails, set at now.
func (s *Store) SaveGuardrails(ctx context.Context, userID uuid.UUID, g brokers.Guardrails, now time.Time) error {
	r := newGuardrailsRow(userID, g, now)
	_, err := s.db.NewInsert().Model(&r).On("CONFLICT (user_id) DO UPDATE").
		Set("max_daily_trades = EXCLUDED.max_daily_trades, max_position_size_pct = EXCLUDED.max_position_size_pct, " +
			"max_portfolio_risk_pct = EXCLUDED.max_portfolio_risk_pct, stop_loss_required = EXCLUDED.stop_loss_required, " +
			"allowed_asset_types = EXCLUDED.allowed_asset_types, updated_at = EXCLUDED.updated_at").Exec(ctx)
	if err != nil {
		return fmt.Errorf("connect: save guardrails of %s: %w", userID, err)
	}
	return nil
}

// Guardrails returns the user's guardrails and when they were last set.
// A user who never set any gets [brokers.DefaultGuardrails], stored the
// first time they are asked for, so that the time is always real: when
// the defaults were first created.
func (s *Service) Guardrails(ctx context.Context, userID uuid.UUID) (brokers.Guardrails, time.Time, error) {
	st := NewStore(s.db)
	g, at, err := st.Guardrails(ctx, userID)
	if err != nil || at != nil {
		return g, deref(at), err
	}
	r := newGuardrailsRow(userID, g, s.now())
	if _, err := s.db.NewInsert().Model(&r).On("CONFLICT (user_id) DO NOTHING").Exec(ctx); err != nil {
		return brokers.Guardrails{}, time.Time{}, fmt.Errorf("connect: store the default guardrails of %s: %w", userID, err)
	}
	// Read again: a concurrent first request or change may have won.
	g, at, err = st.Guardrails(ctx, userID)
	return g, deref(at), err
}

// PatchGuardrails applies patch to the user's guardrails and stores them,
// set now, in one transaction under the user's lock, so that concurrent
// changes of different fields all hold.
func (s *Service) PatchGuardrails(ctx context.Context, userID uuid.UUID, patch func(*brokers.Guardrails)) (brokers.Guardrails, time.Time, error) {
	var g brokers.Guardrails
	now := s.now()
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := database.LockUser(ctx, tx, userID); err != nil {
			return err
		}
		st := NewStore(tx)
		var err error
		if g, _, err = st.Guardrails(ctx, userID); err != nil {
			return err
		}
		patch(&g)
		return st.SaveGuardrails(ctx, userID, g, now)
	})
	if err != nil {
		return brokers.Guardrails{}, time.Time{}, err
	}
	return g, now, nil
}

// deref returns *t, or the zero time for nil.
func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
