package backtestdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"golang.org/x/sync/errgroup"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// MaxAssets bounds a universe: a backtest's cost grows with its assets.
const MaxAssets = 100

// loaders is how many assets' prices Load reads at once: PostgreSQL
// answers a few concurrent reads in about the time of one.
const loaders = 4

// Universe names a backtest's assets: Symbols, or the members of Index
// over time. Exactly one is given.
type Universe struct {
	Symbols []string
	Index   string
}

// LoadConfig tunes [Load]. The zero value reads adjusted prices.
type LoadConfig struct {
	// Unadjusted reads the prices as traded. By default Load reads them
	// back-adjusted for splits and dividends
	// ([marketdata.Store.AdjustedPriceColumns]): a split's price cliff
	// would otherwise read as a crash (and trip stop losses), and a
	// dividend's drop as a loss, while the cash paid is not credited.
	Unadjusted bool
}

// Loaded is a universe read from the database.
type Loaded struct {
	// Adjusted tells whether the prices are back-adjusted for splits and
	// dividends (see [LoadConfig]).
	Adjusted bool
	Assets   []backtest.Asset
	// Days and Calendar are backtest.Sessions of the assets' exchanges.
	Days     []calendar.Date
	Calendar string
}

// Load reads the universe's assets, their prices (adjusted unless
// cfg.Unadjusted) and membership, the
// prices on a few goroutines: md must be safe for concurrent use (on a
// *bun.DB, not a transaction). The
// error is a [*tradekit.ParamError] naming symbols or index when the
// universe is not given, names an unknown asset or index, or holds more
// than [MaxAssets] assets.
func Load(ctx context.Context, md *marketdata.Store, u Universe, cfg LoadConfig) (*Loaded, error) {
	var assets []marketdata.Asset
	spans := map[uuid.UUID][]backtest.Span{}
	switch {
	case len(u.Symbols) > 0 && u.Index != "":
		return nil, &tradekit.ParamError{Param: "index", Msg: "give symbols or an index, not both"}
	case len(u.Symbols) > MaxAssets:
		return nil, &tradekit.ParamError{Param: "symbols", Msg: fmt.Sprintf("must name at most %d assets, not %d", MaxAssets, len(u.Symbols))}
	case len(u.Symbols) > 0:
		seen := map[uuid.UUID]bool{}
		for _, s := range u.Symbols {
			a, err := md.AssetBySymbol(ctx, strings.TrimSpace(s))
			if errors.Is(err, tradekit.ErrNotFound) {
				return nil, &tradekit.ParamError{Param: "symbols", Msg: "names no asset: " + tradekit.Quote(s)}
			}
			if err != nil {
				return nil, err
			}
			if !seen[a.ID] {
				seen[a.ID] = true
				assets = append(assets, a)
			}
		}
	case u.Index != "":
		ix, err := md.IndexBySymbol(ctx, u.Index)
		if errors.Is(err, tradekit.ErrNotFound) {
			return nil, &tradekit.ParamError{Param: "index", Msg: "names no index: " + tradekit.Quote(u.Index)}
		}
		if err != nil {
			return nil, err
		}
		cs, err := md.Constituents(ctx, ix.ID)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if spans[c.AssetID] == nil {
				if len(spans) == MaxAssets {
					return nil, &tradekit.ParamError{Param: "index", Msg: fmt.Sprintf("has more than %d members over time: name at most %d symbols instead", MaxAssets, MaxAssets)}
				}
				a, err := md.Asset(ctx, c.AssetID)
				if err != nil {
					return nil, err
				}
				assets = append(assets, a)
			}
			spans[c.AssetID] = append(spans[c.AssetID], backtest.Span{From: c.From, To: c.To})
		}
		if len(assets) == 0 {
			return nil, &tradekit.ParamError{Param: "index", Msg: "has no members: " + tradekit.Quote(u.Index)}
		}
	default:
		return nil, &tradekit.ParamError{Param: "symbols", Msg: "is required, or index: the assets to trade"}
	}

	l := &Loaded{Assets: make([]backtest.Asset, len(assets)), Adjusted: !cfg.Unadjusted}
	columns := md.AdjustedPriceColumns
	if cfg.Unadjusted {
		columns = md.PriceColumns
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(loaders)
	for i, a := range assets {
		g.Go(func() error {
			bars, err := columns(gctx, a.ID)
			l.Assets[i] = backtest.Asset{Symbol: a.Symbol, Bars: bars, Member: spans[a.ID]}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	exchanges := map[uuid.UUID]string{}
	var names []string
	for _, a := range assets {
		name, ok := exchanges[a.ExchangeID]
		if !ok {
			ex, err := md.Exchange(ctx, a.ExchangeID)
			if err != nil {
				return nil, err
			}
			name, exchanges[a.ExchangeID] = ex.Symbol, ex.Symbol
		}
		names = append(names, name)
	}
	l.Days, l.Calendar = backtest.Sessions(l.Assets, names)
	return l, nil
}

// Record is a stored backtest result.
type Record struct {
	bun.BaseModel `bun:"table:backtests"`

	ID           uuid.UUID `bun:"id,pk"`
	UserID       uuid.UUID `bun:"user_id"`
	StrategyHash string    `bun:"strategy_hash"`
	// Document is the result as the API serves it (JSON).
	Document    string    `bun:"document"`
	TotalReturn *float64  `bun:"total_return"` // nil when not finite
	SharpeRatio *float64  `bun:"sharpe_ratio"`
	CreatedAt   time.Time `bun:"created_at"`
}

// Store keeps backtest results: one per user and strategy hash.
type Store struct{ db bun.IDB }

// NewStore returns a Store on db.
func NewStore(db bun.IDB) *Store { return &Store{db: db} }

// Save stores r, giving it an id if it has none. A result of the same
// user and strategy hash stored before is replaced: its row takes r's id,
// document, figures and time. Save counts nothing against a plan:
// [Service.Run] does.
func (s *Store) Save(ctx context.Context, r *Record) error {
	if r.ID == uuid.Nil {
		r.ID = uuid.New()
	}
	_, err := s.db.NewInsert().Model(r).
		On("CONFLICT (user_id, strategy_hash) DO UPDATE").
		Set("id = EXCLUDED.id, document = EXCLUDED.document, total_return = EXCLUDED.total_return").
		Set("sharpe_ratio = EXCLUDED.sharpe_ratio, created_at = EXCLUDED.created_at").
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("backtestdb: save: %w", err)
	}
	return nil
}

// Result returns the user's result of the strategy hash. The error wraps
// [tradekit.ErrNotFound] when there is none.
func (s *Store) Result(ctx context.Context, userID uuid.UUID, hash string) (Record, error) {
	var r Record
	err := s.db.NewSelect().Model(&r).Where("user_id = ? AND strategy_hash = ?", userID, hash).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, notFound(hash)
	}
	if err != nil {
		return Record{}, fmt.Errorf("backtestdb: result: %w", err)
	}
	return r, nil
}

// Delete deletes the user's result of the strategy hash. The error wraps
// [tradekit.ErrNotFound] when the user has none, another user's included.
func (s *Store) Delete(ctx context.Context, userID uuid.UUID, hash string) error {
	res, err := s.db.NewDelete().Model((*Record)(nil)).Where("user_id = ? AND strategy_hash = ?", userID, hash).Exec(ctx)
	if err != nil {
		return fmt.Errorf("backtestdb: delete: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(hash)
	}
	return nil
}

// StrategyKey names a user's strategy: its author and its hash.
type StrategyKey struct {
	UserID uuid.UUID
	Hash   string
}

// Figures are the headline figures of a stored result, nil when not
// finite.
type Figures struct {
	TotalReturn *float64
	SharpeRatio *float64
}

// Figures returns the figures of the stored results of the given
// strategies, by strategy, in one read; a strategy of which its user
// keeps no result is absent from the map.
func (s *Store) Figures(ctx context.Context, keys []StrategyKey) (map[StrategyKey]Figures, error) {
	out := make(map[StrategyKey]Figures, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	users, hashes := make([]uuid.UUID, 0, len(keys)), make([]string, 0, len(keys))
	want := make(map[StrategyKey]bool, len(keys))
	for _, k := range keys {
		if !want[k] {
			want[k] = true
			users, hashes = append(users, k.UserID), append(hashes, k.Hash)
		}
	}
	var rows []Record
	err := s.db.NewSelect().Model(&rows).Column("user_id", "strategy_hash", "total_return", "sharpe_ratio").
		Where("user_id IN (?) AND strategy_hash IN (?)", bun.In(users), bun.In(hashes)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("backtestdb: figures: %w", err)
	}
	for _, r := range rows {
		if k := (StrategyKey{UserID: r.UserID, Hash: r.StrategyHash}); want[k] {
			out[k] = Figures{TotalReturn: r.TotalReturn, SharpeRatio: r.SharpeRatio}
		}
	}
	return out, nil
}

// has reports whether the user has a result of the strategy hash.
func (s *Store) has(ctx context.Context, userID uuid.UUID, hash string) (bool, error) {
	ok, err := s.db.NewSelect().Model((*Record)(nil)).Where("user_id = ? AND strategy_hash = ?", userID, hash).Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("backtestdb: find a result: %w", err)
	}
	return ok, nil
}

// count returns how many results the users keep.
func (s *Store) count(ctx context.Context, users []uuid.UUID) (int, error) {
	n, err := s.db.NewSelect().Model((*Record)(nil)).Where("user_id IN (?)", bun.In(users)).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("backtestdb: count results: %w", err)
	}
	return n, nil
}

// notFound is the error of a strategy hash of which the user keeps no
// result.
func notFound(hash string) error {
	return fmt.Errorf("backtestdb: %w", tradekit.Errorf(tradekit.ErrNotFound, "no backtest of the strategy %s", tradekit.Quote(hash)))
}
