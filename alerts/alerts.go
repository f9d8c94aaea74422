package alerts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/indicators/formula"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// AlertInput is what a user gives to create an alert.
type AlertInput struct {
	AssetID   uuid.UUID
	Name      string
	Condition string     // a formula of package indicators/formula, true where non-zero
	WebhookID *uuid.UUID // the webhook to deliver its notifications to; nil: all the user's
	Once      bool       // stop after the first firing
	// Adjusted evaluates the condition over prices back-adjusted for
	// splits and dividends, the series the charts show; false over
	// prices as traded. The API's default is true.
	Adjusted bool
}

// ParseCondition parses an alert's condition. The error is a
// *tradekit.ParamError naming "condition", with the position and the
// problem for a formula that does not parse ("1:12: sma expects 2
// arguments, got 1").
func ParseCondition(cond string) (*formula.Expr, error) {
	switch {
	case strings.TrimSpace(cond) == "":
		return nil, &tradekit.ParamError{Param: "condition", Msg: "is required: a formula such as close > sma(close, 50)"}
	case !utf8.ValidString(cond):
		return nil, &tradekit.ParamError{Param: "condition", Msg: "is not valid UTF-8"}
	case len(cond) > formula.MaxLen:
		return nil, &tradekit.ParamError{Param: "condition", Msg: fmt.Sprintf("is %d bytes long; at most %d are allowed", len(cond), formula.MaxLen)}
	}
	if strings.IndexFunc(cond, func(r rune) bool { return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' }) >= 0 {
		return nil, &tradekit.ParamError{Param: "condition", Msg: "must not contain control characters"}
	}
	e, err := formula.Parse(cond)
	if err != nil {
		var se *formula.SyntaxError
		if errors.As(err, &se) {
			return nil, &tradekit.ParamError{Param: "condition", Msg: se.Error()}
		}
		return nil, err
	}
	return e, nil
}

// checkConditionCost returns a *tradekit.ParamError naming "condition",
// with the message of its [*formula.CostError] ("costs N, the plan allows
// M"), when the condition costs more than maxCost (see
// [formula.Expr.Cost]; 0 allows any), and the error of [ParseCondition]
// when it does not parse.
func checkConditionCost(cond string, maxCost int) error {
	e, err := ParseCondition(cond)
	if err != nil {
		return err
	}
	if err := e.CheckCost(maxCost); err != nil {
		return &tradekit.ParamError{Param: "condition", Msg: err.Error()}
	}
	return nil
}

// Validate checks in's name and condition, the checks that need no
// lookup. Errors are *tradekit.ParamError naming the field.
func (in AlertInput) Validate() error {
	if err := checkName("name", in.Name); err != nil {
		return err
	}
	_, err := ParseCondition(in.Condition)
	return err
}

// Alerts returns the user's alerts that are not deleted, oldest first.
func (s *Service) Alerts(ctx context.Context, userID uuid.UUID) ([]Alert, error) {
	list := []Alert{}
	err := s.db.NewSelect().Model(&list).ColumnExpr("alert.*").
		Where("alert.user_id = ? AND alert.deleted_at IS NULL", userID).
		OrderExpr("alert.created_at, alert.id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("alerts: alerts: %w", err)
	}
	if err := s.alertSymbols(ctx, list); err != nil {
		return nil, err
	}
	return list, nil
}

// alertSymbols sets the Symbol of each alert of list from its asset, read
// in one call of marketdata.Store.AssetsOf.
func (s *Service) alertSymbols(ctx context.Context, list []Alert) error {
	ids := make([]uuid.UUID, len(list))
	for i, a := range list {
		ids[i] = a.AssetID
	}
	assets, err := marketdata.NewStore(s.db).AssetsOf(ctx, ids)
	if err != nil {
		return fmt.Errorf("alerts: the assets of %d alerts: %w", len(list), err)
	}
	for i := range list {
		list[i].Symbol = assets[list[i].AssetID].Symbol
	}
	return nil
}

// Alert returns the user's alert id and its latest firings (at most
// limit, newest first). The error wraps tradekit.ErrNotFound when the
// user has no such alert, or it is deleted.
func (s *Service) Alert(ctx context.Context, userID, id uuid.UUID, limit int) (Alert, []Firing, error) {
	var a Alert
	q := s.db.NewSelect().Model(&a).ColumnExpr("alert.*").
		Where("alert.id = ? AND alert.user_id = ? AND alert.deleted_at IS NULL", id, userID)
	if err := scanOne(ctx, q, "alert", id); err != nil {
		return Alert{}, nil, err
	}
	one := []Alert{a}
	if err := s.alertSymbols(ctx, one); err != nil {
		return Alert{}, nil, err
	}
	a = one[0]
	fs := []Firing{}
	err := s.db.NewSelect().Model(&fs).Where("alert_id = ?", id).OrderExpr("bar_date DESC").Limit(limit).Scan(ctx)
	if err != nil {
		return Alert{}, nil, fmt.Errorf("alerts: firings of %s: %w", id, err)
	}
	return a, fs, nil
}

// CreateAlert creates an active alert for the user. Its watermark starts
// at the asset's latest bar: only bars stored later are evaluated. Bad
// input is a *tradekit.ParamError naming the field; an unknown asset or
// a webhook the user does not have wraps tradekit.ErrNotFound; a user
// with as many alerts as the plan allows (deleted ones aside) gets an
// error wrapping tradekit.ErrForbidden with details {"limit": "alerts"}.
// A condition costing more than the plan allows (Config.FormulaCost) is
// a *tradekit.ParamError naming "condition": "costs N, the plan allows M".
func (s *Service) CreateAlert(ctx context.Context, userID uuid.UUID, in AlertInput) (Alert, error) {
	if err := in.Validate(); err != nil {
		return Alert{}, err
	}
	maxCost, err := s.cfg.FormulaCost(ctx, userID)
	if err != nil {
		return Alert{}, err
	}
	if err := checkConditionCost(in.Condition, maxCost); err != nil {
		return Alert{}, err
	}
	md := marketdata.NewStore(s.db)
	asset, err := md.Asset(ctx, in.AssetID)
	if err != nil {
		return Alert{}, err
	}
	if in.WebhookID != nil {
		if _, err := s.webhook(ctx, s.db, userID, *in.WebhookID); err != nil {
			return Alert{}, err
		}
	}
	_, maxAlerts, err := s.cfg.Limits(ctx, userID)
	if err != nil {
		return Alert{}, err
	}
	// The version first: prices saved in between leave a version behind
	// the bars, which the next pass only catches up.
	v, err := md.PriceVersion(ctx, in.AssetID)
	if err != nil {
		return Alert{}, err
	}
	through := ""
	if p, err := md.LatestPrice(ctx, in.AssetID); err == nil {
		through = p.Date.String()
	} else if !errors.Is(err, tradekit.ErrNotFound) {
		return Alert{}, err
	}
	now := s.clock()
	a := Alert{ID: uuid.New(), UserID: userID, AssetID: in.AssetID, Name: in.Name, Condition: in.Condition,
		WebhookID: in.WebhookID, Once: in.Once, Adjusted: in.Adjusted, Status: Active, CheckedVersion: v.Version, CheckedThrough: through,
		CreatedAt: now, UpdatedAt: now, Symbol: asset.Symbol}
	err = s.insertCounted(ctx, userID, &a, alertsCounted, "alerts", maxAlerts, "alerts")
	if err != nil {
		return Alert{}, err
	}
	return a, nil
}

// DeleteAlert deletes the user's alert id: it is no longer evaluated or
// listed, and its firings are kept. The error wraps tradekit.ErrNotFound
// when the user has no such alert, or it is deleted already.
func (s *Service) DeleteAlert(ctx context.Context, userID, id uuid.UUID) error {
	now := s.clock()
	res, err := s.db.NewUpdate().Model((*Alert)(nil)).Set("status = ?, deleted_at = ?, updated_at = ?", Deleted, now, now).
		Where("id = ? AND user_id = ? AND deleted_at IS NULL", id, userID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("alerts: delete alert: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("alert %s not found", id)
	}
	return nil
}

// The rows the plan's limits count, of the members ? of an account.
const (
	alertsCounted     = "user_id IN (?) AND deleted_at IS NULL"
	watchlistsCounted = "user_id IN (?)"
)

// Held returns how many watchlists and alerts the account of the user
// holds, all its members' together, as the plan's limits count them.
func (s *Service) Held(ctx context.Context, userID uuid.UUID) (watchlists, alerts int, err error) {
	_, members, err := s.cfg.Account(ctx, userID)
	if err != nil {
		return 0, 0, err
	}
	if watchlists, err = s.db.NewSelect().Model((*Watchlist)(nil)).Where(watchlistsCounted, bun.In(members)).Count(ctx); err != nil {
		return 0, 0, fmt.Errorf("alerts: count watchlists: %w", err)
	}
	if alerts, err = s.db.NewSelect().Model((*Alert)(nil)).Where(alertsCounted, bun.In(members)).Count(ctx); err != nil {
		return 0, 0, fmt.Errorf("alerts: count alerts: %w", err)
	}
	return watchlists, alerts, nil
}

// insertCounted inserts row, in a transaction under the lock of the
// user's account ([database.Lock]), unless the account's members already
// hold max rows of its model where where holds (its ? is the members'
// ids), which is the 403 of the plan's limit named limit. what names the
// rows in errors.
func (s *Service) insertCounted(ctx context.Context, userID uuid.UUID, row any, where string, limit string, max int, what string) error {
	accountID, members, err := s.cfg.Account(ctx, userID)
	if err != nil {
		return err
	}
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := database.Lock(ctx, tx, accountID); err != nil {
			return err
		}
		n, err := tx.NewSelect().Model(row).Where(where, bun.In(members)).Count(ctx)
		if err != nil {
			return fmt.Errorf("alerts: count %s: %w", what, err)
		}
		if n >= max {
			return limitError(limit, max)
		}
		if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return fmt.Errorf("alerts: insert into %s: %w", what, err)
		}
		return nil
	})
}
