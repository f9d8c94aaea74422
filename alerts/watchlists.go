package alerts

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// checkName returns a *tradekit.ParamError naming param unless name is
// 1 to MaxName characters of printable UTF-8.
func checkName(param, name string) error {
	switch n := utf8.RuneCountInString(name); {
	case strings.TrimSpace(name) == "":
		return &tradekit.ParamError{Param: param, Msg: "is required"}
	case !utf8.ValidString(name):
		return &tradekit.ParamError{Param: param, Msg: "is not valid UTF-8"}
	case n > MaxName:
		return &tradekit.ParamError{Param: param, Msg: fmt.Sprintf("is %d characters long; at most %d are allowed", n, MaxName)}
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return &tradekit.ParamError{Param: param, Msg: "must not contain control characters"}
	}
	return nil
}

// limitError is the 403 of a plan's count limit: details {"limit": what,
// "max": max}. what is a plural ("watchlists"); the message says "1
// watchlist" when max is 1.
func limitError(what string, max int) error {
	noun := what
	if max == 1 {
		noun = strings.TrimSuffix(what, "s")
	}
	return &tradekit.Error{Kind: tradekit.ErrForbidden,
		Msg:     fmt.Sprintf("your plan allows %d %s; delete one or move to a larger plan", max, noun),
		Details: map[string]any{"limit": what, "max": max}}
}

// notFound returns an error wrapping tradekit.ErrNotFound.
func notFound(format string, args ...any) error {
	return tradekit.Errorf(tradekit.ErrNotFound, format, args...)
}

// scanOne runs q, which selects the one row of the user's what (a
// watchlist, an alert, a webhook) id. No row is an error wrapping
// tradekit.ErrNotFound.
func scanOne(ctx context.Context, q *bun.SelectQuery, what string, id uuid.UUID) error {
	err := q.Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("%s %s not found", what, id)
	}
	if err != nil {
		return fmt.Errorf("alerts: %s %s: %w", what, id, err)
	}
	return nil
}

// Watchlists returns the user's watchlists, oldest first, with their
// asset counts.
func (s *Service) Watchlists(ctx context.Context, userID uuid.UUID) ([]Watchlist, error) {
	list := []Watchlist{}
	err := s.db.NewSelect().Model(&list).
		ColumnExpr("watchlist.*").
		ColumnExpr("(SELECT COUNT(*) FROM watchlist_assets AS wa WHERE wa.watchlist_id = watchlist.id) AS asset_count").
		Where("watchlist.user_id = ?", userID).OrderExpr("watchlist.created_at, watchlist.id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("alerts: watchlists: %w", err)
	}
	return list, nil
}

// Watchlist returns the user's watchlist id with its assets, in the order
// they were added. The error wraps tradekit.ErrNotFound when the user has
// no such watchlist.
func (s *Service) Watchlist(ctx context.Context, userID, id uuid.UUID) (Watchlist, []WatchlistAsset, error) {
	w, err := watchlist(ctx, s.db, userID, id)
	if err != nil {
		return Watchlist{}, nil, err
	}
	items := []WatchlistAsset{}
	err = s.db.NewSelect().Model(&items).ColumnExpr("watchlist_asset.*").
		Where("watchlist_asset.watchlist_id = ?", id).OrderExpr("watchlist_asset.added_at").Scan(ctx)
	if err != nil {
		return Watchlist{}, nil, fmt.Errorf("alerts: watchlist assets: %w", err)
	}
	ids := make([]uuid.UUID, len(items))
	for i, it := range items {
		ids[i] = it.AssetID
	}
	assets, err := marketdata.NewStore(s.db).AssetsOf(ctx, ids)
	if err != nil {
		return Watchlist{}, nil, fmt.Errorf("alerts: the assets of watchlist %s: %w", id, err)
	}
	for i := range items {
		a := assets[items[i].AssetID]
		items[i].Symbol, items[i].Name = a.Symbol, a.Name
	}
	// In the order they were added, by symbol when added at once.
	slices.SortStableFunc(items, func(x, y WatchlistAsset) int {
		return cmp.Or(x.AddedAt.Compare(y.AddedAt), strings.Compare(x.Symbol, y.Symbol))
	})
	w.AssetCount = len(items)
	return w, items, nil
}

// watchlist reads the user's watchlist id with its asset count.
func watchlist(ctx context.Context, db bun.IDB, userID, id uuid.UUID) (Watchlist, error) {
	var w Watchlist
	q := db.NewSelect().Model(&w).ColumnExpr("watchlist.*").
		ColumnExpr("(SELECT COUNT(*) FROM watchlist_assets AS wa WHERE wa.watchlist_id = watchlist.id) AS asset_count").
		Where("watchlist.id = ? AND watchlist.user_id = ?", id, userID)
	if err := scanOne(ctx, q, "watchlist", id); err != nil {
		return Watchlist{}, err
	}
	return w, nil
}

// CreateWatchlist creates an empty watchlist named name for the user. A
// user with as many watchlists as the plan allows gets an error wrapping
// tradekit.ErrForbidden with details {"limit": "watchlists"}; a bad name
// is a *tradekit.ParamError naming "name".
func (s *Service) CreateWatchlist(ctx context.Context, userID uuid.UUID, name string) (Watchlist, error) {
	if err := checkName("name", name); err != nil {
		return Watchlist{}, err
	}
	maxLists, _, err := s.cfg.Limits(ctx, userID)
	if err != nil {
		return Watchlist{}, err
	}
	now := s.clock()
	w := Watchlist{ID: uuid.New(), UserID: userID, Name: name, CreatedAt: now, UpdatedAt: now}
	err = s.insertCounted(ctx, userID, &w, watchlistsCounted, "watchlists", maxLists, "watchlists")
	if err != nil {
		return Watchlist{}, err
	}
	return w, nil
}

// RenameWatchlist renames the user's watchlist id. The error wraps
// tradekit.ErrNotFound when the user has no such watchlist.
func (s *Service) RenameWatchlist(ctx context.Context, userID, id uuid.UUID, name string) (Watchlist, error) {
	if err := checkName("name", name); err != nil {
		return Watchlist{}, err
	}
	res, err := s.db.NewUpdate().Model((*Watchlist)(nil)).Set("name = ?, updated_at = ?", name, s.clock()).
		Where("id = ? AND user_id = ?", id, userID).Exec(ctx)
	if err != nil {
		return Watchlist{}, fmt.Errorf("alerts: rename watchlist: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Watchlist{}, notFound("watchlist %s not found", id)
	}
	return watchlist(ctx, s.db, userID, id)
}

// DeleteWatchlist deletes the user's watchlist id and its list of assets.
// The error wraps tradekit.ErrNotFound when the user has no such
// watchlist.
func (s *Service) DeleteWatchlist(ctx context.Context, userID, id uuid.UUID) error {
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := watchlist(ctx, tx, userID, id); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*WatchlistAsset)(nil)).Where("watchlist_id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("alerts: delete watchlist assets: %w", err)
		}
		if _, err := tx.NewDelete().Model((*Watchlist)(nil)).Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("alerts: delete watchlist: %w", err)
		}
		return nil
	})
}

// AddAsset adds the asset to the user's watchlist id; adding one already
// there changes nothing. The error wraps tradekit.ErrNotFound when the
// user has no such watchlist or the asset does not exist, and
// tradekit.ErrConflict when the list holds MaxWatchlistAssets already.
func (s *Service) AddAsset(ctx context.Context, userID, id, assetID uuid.UUID) (Watchlist, error) {
	if _, err := marketdata.NewStore(s.db).Asset(ctx, assetID); err != nil {
		return Watchlist{}, err
	}
	var w Watchlist
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := database.LockUser(ctx, tx, userID); err != nil {
			return err
		}
		var err error
		if w, err = watchlist(ctx, tx, userID, id); err != nil {
			return err
		}
		if w.AssetCount >= MaxWatchlistAssets {
			return tradekit.Errorf(tradekit.ErrConflict, "watchlist %s holds %d assets, the most a watchlist may hold", id, MaxWatchlistAssets)
		}
		res, err := tx.NewInsert().Model(&WatchlistAsset{WatchlistID: id, AssetID: assetID, AddedAt: s.clock()}).
			On("CONFLICT (watchlist_id, asset_id) DO NOTHING").Exec(ctx)
		if err != nil {
			return fmt.Errorf("alerts: add to watchlist: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			w.AssetCount++
		}
		return nil
	})
	return w, err
}

// RemoveAsset removes the asset from the user's watchlist id. The error
// wraps tradekit.ErrNotFound when the user has no such watchlist or the
// asset is not in it.
func (s *Service) RemoveAsset(ctx context.Context, userID, id, assetID uuid.UUID) error {
	if _, err := watchlist(ctx, s.db, userID, id); err != nil {
		return err
	}
	res, err := s.db.NewDelete().Model((*WatchlistAsset)(nil)).Where("watchlist_id = ? AND asset_id = ?", id, assetID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("alerts: remove from watchlist: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("asset %s is not in watchlist %s", assetID, id)
	}
	return nil
}
