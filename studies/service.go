package studies

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/lru"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
)

// Config tunes a [Service]. The zero value gives the defaults.
type Config struct {
	// CacheBytes bounds the memory of cached price columns and computed
	// series. Default 64 MiB.
	CacheBytes int
	// Logger receives the failures of [Service.Watch]. Default
	// slog.Default().
	Logger *slog.Logger
	// Reads, when set, is where the price columns are read, at least as
	// new as the price version read from the service's database (see
	// [marketdata.Reads.PriceColumnsAt]): a streaming replica that is
	// current. Default: the service's database.
	Reads *marketdata.Reads
}

// Service computes indicator series of stored assets, over their prices
// as traded or back-adjusted for splits and dividends
// ([marketdata.Adjust]). It caches each asset's price columns and each
// computed series (per asset, adjustment, indicator and parameters) in a
// bounded LRU, keyed by the asset's price version, which saving corporate
// actions bumps as saving prices does:
// when prices change, through any instance, the next request sees the new
// version and recomputes. With [Service.Watch] running on PostgreSQL, the
// version itself comes from memory, kept current by change notifications,
// so "next" means once the notification arrives, about a millisecond after
// the change commits. It is safe for concurrent use.
type Service struct {
	db       bun.IDB
	reads    *marketdata.Reads
	versions *marketdata.Versions // nil on a transaction
	cache    *lru.Cache
}

// New returns a Service reading prices from db.
func New(db bun.IDB, cfg Config) *Service {
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 64 << 20
	}
	if cfg.Reads == nil {
		cfg.Reads = marketdata.NewReads(marketdata.On(db))
	}
	s := &Service{db: db, reads: cfg.Reads, cache: lru.New(cfg.CacheBytes)}
	if db, ok := db.(*bun.DB); ok {
		s.versions = marketdata.NewVersions(db, marketdata.VersionsConfig{Logger: cfg.Logger})
	}
	return s
}

// Watch keeps the service's knowledge of price versions current from the
// database's change notifications until ctx is done, so that cached
// results are served without asking the database whether the prices
// changed (see [marketdata.Versions]; PostgreSQL only). Without Watch every
// request asks.
func (s *Service) Watch(ctx context.Context) {
	if s.versions != nil {
		s.versions.Run(ctx)
	}
}

// Watching reports whether [Service.Watch] keeps price versions in memory
// at the moment.
func (s *Service) Watching() bool { return s.versions != nil && s.versions.Listening() }

// PriceVersion returns the asset's price version: from memory while
// [Service.Watch] listens, else from the database. The error wraps
// tradekit.ErrNotFound for an unknown asset.
func (s *Service) PriceVersion(ctx context.Context, assetID uuid.UUID) (marketdata.PriceVersion, error) {
	return s.priceVersion(ctx, assetID)
}

// priceVersion returns the asset's price version.
func (s *Service) priceVersion(ctx context.Context, assetID uuid.UUID) (marketdata.PriceVersion, error) {
	if s.versions != nil {
		return s.versions.PriceVersion(ctx, assetID)
	}
	return marketdata.NewStore(s.db).PriceVersion(ctx, assetID)
}

// Bars returns the asset's whole daily history and its price version:
// back-adjusted for its corporate actions when adjusted is true
// ([marketdata.Store.AdjustedPriceColumns]), else as traded. The error
// wraps tradekit.ErrNotFound for an unknown asset.
func (s *Service) Bars(ctx context.Context, assetID uuid.UUID, adjusted bool) (ohlcv.Series, marketdata.PriceVersion, error) {
	v, err := s.priceVersion(ctx, assetID)
	if err != nil {
		return ohlcv.Series{}, v, err
	}
	key := "bars/" + basis(adjusted) + assetID.String()
	if b, ok := s.cache.Get(key, v.Version); ok {
		return b.(ohlcv.Series), v, nil
	}
	// Read after the version, and on a replica only once it has
	// replayed that version: the prices and actions are at least as new
	// as it, so nothing stale is ever cached under a newer version.
	var b ohlcv.Series
	if adjusted {
		b, err = s.reads.AdjustedPriceColumnsAt(ctx, assetID, v.Version)
	} else {
		b, err = s.reads.PriceColumnsAt(ctx, assetID, v.Version)
	}
	if err != nil {
		return ohlcv.Series{}, v, err
	}
	s.cache.Put(key, v.Version, b, barsSize(b))
	return b, v, nil
}

// basis is the part of a cache key that tells adjusted series from
// series as traded.
func basis(adjusted bool) string {
	if adjusted {
		return "adj/"
	}
	return ""
}

// barsSize is the memory b holds, for the cache's accounting.
func barsSize(b ohlcv.Series) int { return b.Len() * (8*5 + 24) }

// Series returns spec computed over the asset's whole history in timeframe
// tf (see [ohlcv.Series.Resample]), adjusted or not as in [Service.Bars],
// and the price version. Windowing it afterwards (see [Output.Window])
// gives values that never depend on the window.
func (s *Service) Series(ctx context.Context, assetID uuid.UUID, adjusted bool, spec Spec, tf ohlcv.Timeframe) (Output, marketdata.PriceVersion, error) {
	b, v, err := s.Bars(ctx, assetID, adjusted)
	if err != nil {
		return Output{}, v, err
	}
	return s.series(assetID, adjusted, b, v, spec, tf), v, nil
}

// series returns spec over b in timeframe tf, from the cache when it can.
func (s *Service) series(assetID uuid.UUID, adjusted bool, b ohlcv.Series, v marketdata.PriceVersion, spec Spec, tf ohlcv.Timeframe) Output {
	key := "series/" + basis(adjusted) + assetID.String() + "/" + string(tf) + "/" + spec.Key()
	if o, ok := s.cache.Get(key, v.Version); ok {
		return o.(Output)
	}
	o := Compute(spec, b.Resample(tf))
	s.cache.Put(key, v.Version, o, o.size())
	return o
}

// Latest is an indicator's values at an asset's latest bar; NaN where
// undefined (too little history).
type Latest struct {
	Spec                                   Spec
	Date                                   calendar.Date // the bar's date; zero without prices
	Value, Signal, Histogram, Upper, Lower float64
}

// latest returns o's values at its last bar.
func latest(s Spec, o Output) Latest {
	i := o.Last()
	l := Latest{Spec: s, Value: at(o.Value, i), Signal: at(o.Signal, i),
		Histogram: at(o.Histogram, i), Upper: at(o.Upper, i), Lower: at(o.Lower, i)}
	if i >= 0 {
		l.Date = o.Dates[i]
	}
	return l
}

// SummarySpecs are the indicators of a summary: SMA_20, SMA_50, SMA_200,
// RSI_14, MACD(12,26,9) and BB_20 (stdDev 2).
var SummarySpecs = []Spec{
	{Kind: SMA, Period: 20}, {Kind: SMA, Period: 50}, {Kind: SMA, Period: 200},
	{Kind: RSI, Period: 14}, {Kind: MACD, Fast: 12, Slow: 26, Signal: 9}, {Kind: BB, Period: 20, K: 2},
}

// Latest returns specs at the asset's latest bar in each timeframe of
// tfs: out[i][j] is specs[j] in tfs[i], over prices adjusted or not as in
// [Service.Bars]. It also returns the price version, whose UpdatedAt is
// when the prices (or corporate actions) last changed.
func (s *Service) Latest(ctx context.Context, assetID uuid.UUID, adjusted bool, specs []Spec, tfs []ohlcv.Timeframe) ([][]Latest, marketdata.PriceVersion, error) {
	b, v, err := s.Bars(ctx, assetID, adjusted)
	if err != nil {
		return nil, v, err
	}
	out := make([][]Latest, len(tfs))
	for i, tf := range tfs {
		out[i] = make([]Latest, len(specs))
		for j, spec := range specs {
			out[i][j] = latest(spec, s.series(assetID, adjusted, b, v, spec, tf))
		}
	}
	return out, v, nil
}

// Evaluate evaluates the custom indicator c over the asset's whole daily
// history, adjusted or not as in [Service.Bars]: the result's Value holds
// one value per bar, NaN where the formula is undefined. It also returns
// the price version the history was read at. The error is c's parse error
// (a *tradekit.ParamError naming the formula), or as [Service.Bars].
func (s *Service) Evaluate(ctx context.Context, c CustomIndicator, assetID uuid.UUID, adjusted bool) (Output, marketdata.PriceVersion, error) {
	expr, err := c.Parse()
	if err != nil {
		return Output{}, marketdata.PriceVersion{}, err
	}
	b, v, err := s.Bars(ctx, assetID, adjusted)
	if err != nil {
		return Output{}, v, err
	}
	vals, err := expr.Eval(b)
	if err != nil {
		return Output{}, v, err
	}
	return Output{Dates: b.Dates, Value: vals}, v, nil
}
