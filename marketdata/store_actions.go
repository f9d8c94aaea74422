package marketdata

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

// SaveActions upserts the corporate actions: an action of the same asset,
// kind and date has its value replaced. Each is checked with
// [Action.Validate] first. Run it on a Store built on a transaction to
// make it all or nothing.
//
// Adjusted series depend on the actions as much as on the prices, so
// SaveActions bumps the price version (see [PriceVersion]) of every asset
// whose actions it changed, and announces it as [Store.SavePrices] does:
// every cache keyed by the price version, in any process, sees the change.
// Saving an action exactly as stored changes nothing, version included.
func (s *Store) SaveActions(ctx context.Context, acts []Action) error {
	_, err := s.SaveActionsCount(ctx, acts)
	return err
}

// SaveActionsCount saves the actions as [Store.SaveActions] does and
// returns how many of them it inserted or changed (0 when every one was
// stored as it is).
func (s *Store) SaveActionsCount(ctx context.Context, acts []Action) (int, error) {
	var changed []uuid.UUID
	seen := map[uuid.UUID]bool{}
	count := 0
	for _, a := range acts {
		if err := a.Validate(); err != nil {
			return 0, err
		}
		res, err := s.db.NewRaw(`INSERT INTO corporate_actions (asset_id, date, kind, value) VALUES (?, ?, ?, ?)
			ON CONFLICT (asset_id, kind, date) DO UPDATE SET value = excluded.value
			WHERE corporate_actions.value <> excluded.value`,
			a.AssetID, SQLDate(a.Date), string(a.Kind), a.Value.String()).Exec(ctx)
		if err != nil {
			return 0, fmt.Errorf("marketdata: save actions: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			count++
			if !seen[a.AssetID] {
				seen[a.AssetID] = true
				changed = append(changed, a.AssetID)
			}
		}
	}
	if err := s.bumpVersions(ctx, changed); err != nil {
		return 0, fmt.Errorf("marketdata: save actions: version: %w", err)
	}
	return count, nil
}

// Actions returns the corporate actions of the asset, oldest first (a
// split before a dividend of the same date). The error wraps
// [tradekit.ErrNotFound] when the asset does not exist.
func (s *Store) Actions(ctx context.Context, assetID uuid.UUID) ([]Action, error) {
	if _, err := s.Asset(ctx, assetID); err != nil {
		return nil, err
	}
	return s.actions(ctx, assetID)
}

// actions returns the corporate actions of the asset, oldest first,
// without checking that it exists.
func (s *Store) actions(ctx context.Context, assetID uuid.UUID) ([]Action, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT date, kind, value FROM corporate_actions WHERE asset_id = ?
		ORDER BY date, kind DESC`, assetID)
	if err != nil {
		return nil, fmt.Errorf("marketdata: actions of %s: %w", assetID, err)
	}
	defer rows.Close()
	out := []Action{}
	for rows.Next() {
		var d SQLDate
		var kind string
		var value []byte
		if err := rows.Scan(&d, &kind, &value); err != nil {
			return nil, fmt.Errorf("marketdata: actions of %s: %w", assetID, err)
		}
		v, err := parseDecimalText(value)
		if err != nil {
			return nil, fmt.Errorf("marketdata: actions of %s: %w", assetID, err)
		}
		out = append(out, Action{AssetID: assetID, Date: calendar.Date(d), Kind: ActionKind(kind), Value: v})
	}
	return out, rows.Err()
}

// ImportActions loads corporate actions of one kind from CSV with a header
// row: symbol, date, ratio for splits; symbol, exDate, amount for
// dividends (columns by name, ignoring case, spaces and underscores). The
// assets must exist. It returns the number of actions stored; the first
// bad row stops it with a *[ParseError] naming its line (run it on a Store
// built on a transaction so that nothing is written then).
func ImportActions(ctx context.Context, st *Store, kind ActionKind, r io.Reader) (int, error) {
	dateCol, valueCol := "date", "ratio"
	switch kind {
	case Split:
	case Dividend:
		dateCol, valueCol = "exdate", "amount"
	default:
		return 0, fmt.Errorf("marketdata: unknown action kind %q: %w", kind, tradekit.ErrInvalid)
	}
	recs, err := readRecords(r, CSV, "symbol", dateCol, valueCol)
	if err != nil {
		return 0, err
	}
	ids := map[string]uuid.UUID{}
	acts := make([]Action, 0, len(recs))
	for _, rec := range recs {
		sym := NormalizeSymbol(rec.get("symbol"))
		id, ok := ids[sym]
		if !ok {
			a, err := st.AssetBySymbol(ctx, sym)
			if errors.Is(err, tradekit.ErrNotFound) {
				return 0, rec.errorf("asset %q: unknown (import its prices first)", sym)
			} else if err != nil {
				return 0, err
			}
			id, ids[sym] = a.ID, a.ID
		}
		a := Action{AssetID: id, Kind: kind}
		if a.Date, err = parseDate(rec, dateCol); err != nil {
			return 0, err
		}
		if a.Value, err = parseDecimal(rec, valueCol); err != nil {
			return 0, err
		}
		if err := a.Validate(); err != nil {
			return 0, rec.errorf("%s", trimPrefix(err))
		}
		acts = append(acts, a)
	}
	if err := st.SaveActions(ctx, acts); err != nil {
		return 0, err
	}
	return len(recs), nil
}

// AdjustedPrices returns [Store.Prices] back-adjusted for the asset's
// corporate actions ([Adjust]). The factors come from the whole history,
// so a range gets the same values as the full series has on its dates.
func (s *Store) AdjustedPrices(ctx context.Context, assetID uuid.UUID, from, to calendar.Date) ([]Price, error) {
	acts, err := s.Actions(ctx, assetID)
	if err != nil {
		return nil, err
	}
	all, err := s.Prices(ctx, assetID, calendar.Date{}, calendar.Date{})
	if err != nil {
		return nil, err
	}
	adj := Adjust(all, acts)
	zero := calendar.Date{}
	if from != zero && to != zero && from.After(to) {
		return nil, fmt.Errorf("marketdata: from %s is after to %s: %w", from, to, tradekit.ErrInvalid)
	}
	out := adj[:0:0]
	for _, p := range adj {
		if (from == zero || !p.Date.Before(from)) && (to == zero || !p.Date.After(to)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// AdjustedPriceColumns returns the asset's whole daily history as
// [Store.PriceColumns] does, back-adjusted for its corporate actions: the
// float64 nearest each price of [Store.AdjustedPrices] (so indicators over
// it agree with the adjusted price list). An asset without actions gets
// its columns as traded, from the stored copy. The error wraps
// [tradekit.ErrNotFound] when the asset does not exist.
func (s *Store) AdjustedPriceColumns(ctx context.Context, assetID uuid.UUID) (ohlcv.Series, error) {
	acts, err := s.actions(ctx, assetID)
	if err != nil {
		return ohlcv.Series{}, err
	}
	if len(acts) == 0 {
		return s.PriceColumns(ctx, assetID)
	}
	all, err := s.Prices(ctx, assetID, calendar.Date{}, calendar.Date{})
	if err != nil {
		return ohlcv.Series{}, err
	}
	return PriceSeries(Adjust(all, acts)), nil
}

// AdjustedColumnsOf returns the columns of [Store.PriceColumnsOf] (or
// of [Store.PriceTailsOf]) back-adjusted for corporate actions, as
// [Store.AdjustedPriceColumns] gives them: cols, with the bars of each
// asset that has actions replaced by its adjusted bars from the first
// date of its bars in cols. One query finds the assets with actions; each
// of them then reads its prices once (assets without actions, most of a
// market, cost nothing more). The versions are cols', read before the
// prices, so the adjusted bars are at least as new as them. cols is not
// modified.
func (s *Store) AdjustedColumnsOf(ctx context.Context, cols map[uuid.UUID]VersionedColumns) (map[uuid.UUID]VersionedColumns, error) {
	out := make(map[uuid.UUID]VersionedColumns, len(cols))
	ids := make([]uuid.UUID, 0, len(cols))
	for id, c := range cols {
		out[id] = c
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return out, nil
	}
	acts, err := s.actionsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	for id, list := range acts {
		c := out[id]
		// From the first bar given: the whole history, or the tail of
		// Store.PriceTailsOf. A bar's adjustment depends on the actions
		// after it and on the close before each dividend's ex-date,
		// never on the bars before it, so a tail adjusts as the same
		// bars of the whole history do.
		var from calendar.Date
		if c.Bars.Len() > 0 {
			from = c.Bars.Dates[0]
		}
		all, err := s.Prices(ctx, id, from, calendar.Date{})
		if err != nil {
			return nil, err
		}
		c.Bars = PriceSeries(Adjust(all, list))
		out[id] = c
	}
	return out, nil
}

// actionsOf returns the corporate actions of the assets ids that have
// any, by asset, oldest first as [Store.Actions] orders them.
func (s *Store) actionsOf(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID][]Action, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT asset_id, date, kind, value FROM corporate_actions WHERE asset_id IN (?)
		ORDER BY asset_id, date, kind DESC`, bun.In(ids))
	if err != nil {
		return nil, fmt.Errorf("marketdata: actions of %d assets: %w", len(ids), err)
	}
	defer rows.Close()
	out := map[uuid.UUID][]Action{}
	for rows.Next() {
		var id uuid.UUID
		var d SQLDate
		var kind string
		var value []byte
		if err := rows.Scan(&id, &d, &kind, &value); err != nil {
			return nil, fmt.Errorf("marketdata: actions of %d assets: %w", len(ids), err)
		}
		v, err := parseDecimalText(value)
		if err != nil {
			return nil, fmt.Errorf("marketdata: actions of %s: %w", id, err)
		}
		out[id] = append(out[id], Action{AssetID: id, Date: calendar.Date(d), Kind: ActionKind(kind), Value: v})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("marketdata: actions of %d assets: %w", len(ids), err)
	}
	return out, nil
}
