package studies

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/internal/database"
)

// Store keeps users' custom indicators. It works on a database or inside a
// transaction: build it from either.
type Store struct {
	db bun.IDB
}

// NewStore returns a Store on db, a *bun.DB or a bun.Tx.
func NewStore(db bun.IDB) *Store {
	return &Store{db: db}
}

// CustomIndicators returns the user's custom indicators, oldest first.
func (s *Store) CustomIndicators(ctx context.Context, userID uuid.UUID) ([]CustomIndicator, error) {
	list := []CustomIndicator{}
	err := s.db.NewSelect().Model(&list).
		Where("user_id = ? AND deleted_at IS NULL", userID).
		Order("created_at", "id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("studies: custom indicators: %w", err)
	}
	return list, nil
}

// CustomIndicator returns the user's custom indicator id. The error wraps
// [tradekit.ErrNotFound] when there is none, it is deleted, or it belongs
// to another user.
func (s *Store) CustomIndicator(ctx context.Context, userID, id uuid.UUID) (CustomIndicator, error) {
	var c CustomIndicator
	err := s.db.NewSelect().Model(&c).
		Where("id = ? AND user_id = ? AND deleted_at IS NULL", id, userID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return CustomIndicator{}, fmt.Errorf("studies: %w", tradekit.Errorf(tradekit.ErrNotFound, "custom indicator %s not found", id))
	}
	if err != nil {
		return CustomIndicator{}, fmt.Errorf("studies: custom indicator %s: %w", id, err)
	}
	return c, nil
}

// CreateCustomIndicator validates c and stores it with a new id and its
// creation time. The error wraps [tradekit.ErrInvalid] for a bad field and
// [tradekit.ErrConflict] when the user already has [MaxCustom] or one of
// the same name. The checks and the insert run in one transaction under
// the user's lock (a savepoint when the Store is on a transaction), so
// concurrent creations never pass MaxCustom.
func (s *Store) CreateCustomIndicator(ctx context.Context, c *CustomIndicator, now time.Time) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := database.LockUser(ctx, tx, c.UserID); err != nil {
			return fmt.Errorf("studies: %w", err)
		}
		st := NewStore(tx)
		n, err := tx.NewSelect().Model((*CustomIndicator)(nil)).
			Where("user_id = ? AND deleted_at IS NULL", c.UserID).Count(ctx)
		if err != nil {
			return fmt.Errorf("studies: count custom indicators: %w", err)
		}
		if n >= MaxCustom {
			return fmt.Errorf("studies: %w", tradekit.Errorf(tradekit.ErrConflict, "you have %d custom indicators, the most allowed; delete one first", n))
		}
		if err := st.checkName(ctx, c); err != nil {
			return err
		}
		c.ID = uuid.New()
		c.CreatedAt, c.UpdatedAt = now.UTC(), now.UTC()
		if _, err := tx.NewInsert().Model(c).Exec(ctx); err != nil {
			return nameConflict(c, fmt.Errorf("studies: create custom indicator: %w", err))
		}
		return nil
	})
}

// checkName returns a [tradekit.ErrConflict] when the user has another
// custom indicator named c.Name.
func (s *Store) checkName(ctx context.Context, c *CustomIndicator) error {
	taken, err := s.db.NewSelect().Model((*CustomIndicator)(nil)).
		Where("user_id = ? AND name = ? AND id <> ? AND deleted_at IS NULL", c.UserID, c.Name, c.ID).Exists(ctx)
	if err != nil {
		return fmt.Errorf("studies: check custom indicator name: %w", err)
	}
	if taken {
		return nameConflict(c, nil)
	}
	return nil
}

// nameConflict returns the conflict of c's name when err is nil or the
// unique index's refusal (two writers that passed checkName together),
// and err otherwise.
func nameConflict(c *CustomIndicator, err error) error {
	if err != nil && !database.IsUniqueViolation(err) {
		return err
	}
	return fmt.Errorf("studies: %w", tradekit.Errorf(tradekit.ErrConflict,
		"you already have a custom indicator named %s", tradekit.Quote(c.Name)))
}

// UpdateCustomIndicator applies p to the user's custom indicator id,
// validates the result and saves it. Errors as [Store.CustomIndicator] and
// [CustomIndicator.Validate], and [tradekit.ErrConflict] for a new name
// another of the user's custom indicators has.
func (s *Store) UpdateCustomIndicator(ctx context.Context, userID, id uuid.UUID, p CustomPatch, now time.Time) (CustomIndicator, error) {
	c, err := s.CustomIndicator(ctx, userID, id)
	if err != nil {
		return CustomIndicator{}, err
	}
	p.Apply(&c)
	if err := c.Validate(); err != nil {
		return CustomIndicator{}, err
	}
	if p.Name != nil {
		if err := s.checkName(ctx, &c); err != nil {
			return CustomIndicator{}, err
		}
	}
	c.UpdatedAt = now.UTC()
	_, err = s.db.NewUpdate().Model(&c).Column("name", "formula", "description", "updated_at").WherePK().Exec(ctx)
	if err != nil {
		return CustomIndicator{}, nameConflict(&c, fmt.Errorf("studies: update custom indicator: %w", err))
	}
	return c, nil
}

// DeleteCustomIndicator marks the user's custom indicator id deleted;
// afterwards it is not found. Errors as [Store.CustomIndicator].
func (s *Store) DeleteCustomIndicator(ctx context.Context, userID, id uuid.UUID, now time.Time) error {
	res, err := s.db.NewUpdate().Model((*CustomIndicator)(nil)).
		Set("deleted_at = ?", now.UTC()).
		Where("id = ? AND user_id = ? AND deleted_at IS NULL", id, userID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("studies: delete custom indicator: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("studies: %w", tradekit.Errorf(tradekit.ErrNotFound, "custom indicator %s not found", id))
	}
	return nil
}
