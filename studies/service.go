package studies

import (
	"context"
	"log/slog"
	"math"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/lru"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/calendar"
)

// Config tunes a [Service]. The zero value gives the defaults.
type Config struct {
	// CacheBytes bounds the memory of cached price columns and computed
	// series. Default 64 MiB.
	CacheBytes int
	// Logger receives the failures of [Service.Watch]. Default
	// slog.Default().
	Logger *slog.Logger
}

// Service computes indicator series of stored assets. It caches each
// asset's price columns and each computed series (per asset, indicator
// and parameters) in a bounded LRU, keyed by the asset's price version:
// when prices change, through any instance, the next request sees the new
// version and recomputes. With [Service.Watch] running on PostgreSQL, the
// version itself comes from memory, kept current by change notifications,
// so "next" means once the notification arrives, about a millisecond after
// the change commits. It is safe for concurrent use.
type Service struct {
	db       bun.IDB
	versions *marketdata.Versions // nil on a transaction
	cache    *lru.Cache
}

// NewService returns a Service reading prices from db.
func NewService(db bun.IDB, cfg Config) *Service {
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 64 << 20
	}
	s := &Service{db: db, cache: lru.New(cfg.CacheBytes)}
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

// Bars returns the asset's whole daily history and its price version. The
// error wraps tradekit.ErrNotFound for an unknown asset.
func (s *Service) Bars(ctx context.Context, assetID uuid.UUID) (Bars, marketdata.PriceVersion, error) {
	v, err := s.priceVersion(ctx, assetID)
	if err != nil {
		return Bars{}, v, err
	}
	key := "bars/" + assetID.String()
	if b, ok := s.cache.Get(key, v.Version); ok {
		return b.(Bars), v, nil
	}
	// Read after the version: the prices are at least as new as it, so
	// nothing stale is ever cached under a newer version.
	c, err := marketdata.NewStore(s.db).PriceColumns(ctx, assetID)
	if err != nil {
		return Bars{}, v, err
	}
	b := Bars(c)
	s.cache.Put(key, v.Version, b, b.size())
	return b, v, nil
}

// Series returns spec computed over the asset's whole history in timeframe
// tf (see [Bars.Resample]), and the price version. Windowing it afterwards
// (see [Output.Window]) gives values that never depend on the window.
func (s *Service) Series(ctx context.Context, assetID uuid.UUID, spec Spec, tf string) (Output, marketdata.PriceVersion, error) {
	b, v, err := s.Bars(ctx, assetID)
	if err != nil {
		return Output{}, v, err
	}
	o, err := s.series(assetID, b, v, spec, tf)
	return o, v, err
}

// series returns spec over b in timeframe tf, from the cache when it can.
func (s *Service) series(assetID uuid.UUID, b Bars, v marketdata.PriceVersion, spec Spec, tf string) (Output, error) {
	key := "series/" + assetID.String() + "/" + tf + "/" + spec.key()
	if o, ok := s.cache.Get(key, v.Version); ok {
		return o.(Output), nil
	}
	rb, err := b.Resample(tf)
	if err != nil {
		return Output{}, err
	}
	o := Compute(spec, rb)
	s.cache.Put(key, v.Version, o, o.size())
	return o, nil
}

// SeriesJSON is [Service.Series] encoded: the JSON list of spec's data
// points dated from from to to (inclusive; a zero bound is open), newest
// first, appended to b. The whole series' encoding is cached beside it.
func (s *Service) SeriesJSON(ctx context.Context, b []byte, assetID uuid.UUID, spec Spec, tf string, from, to calendar.Date) ([]byte, error) {
	bars, v, err := s.Bars(ctx, assetID)
	if err != nil {
		return nil, err
	}
	key := "json/" + assetID.String() + "/" + tf + "/" + spec.key()
	if e, ok := s.cache.Get(key, v.Version); ok {
		return e.(*Encoded).AppendWindow(b, from, to), nil
	}
	o, err := s.series(assetID, bars, v, spec, tf)
	if err != nil {
		return nil, err
	}
	e := Encode(o)
	s.cache.Put(key, v.Version, e, e.size())
	return e.AppendWindow(b, from, to), nil
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
// tfs: out[i][j] is specs[j] in tfs[i]. It also returns the price version,
// whose UpdatedAt is when the prices last changed.
func (s *Service) Latest(ctx context.Context, assetID uuid.UUID, specs []Spec, tfs []string) ([][]Latest, marketdata.PriceVersion, error) {
	b, v, err := s.Bars(ctx, assetID)
	if err != nil {
		return nil, v, err
	}
	out := make([][]Latest, len(tfs))
	for i, tf := range tfs {
		out[i] = make([]Latest, len(specs))
		for j, spec := range specs {
			o, err := s.series(assetID, b, v, spec, tf)
			if err != nil {
				return nil, v, err
			}
			out[i][j] = latest(spec, o)
		}
	}
	return out, v, nil
}

// EvaluateJSON evaluates the user's custom indicator id over the asset's
// whole history and appends its defined values dated from from to to
// (inclusive; a zero bound is open) to b as a JSON list of {date, value},
// newest first. The encoding is cached per asset, price version and
// formula. Errors as [Store.CustomIndicator] and [Service.Bars].
func (s *Service) EvaluateJSON(ctx context.Context, b []byte, userID, id, assetID uuid.UUID, from, to calendar.Date) ([]byte, error) {
	c, err := NewStore(s.db).CustomIndicator(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	bars, v, err := s.Bars(ctx, assetID)
	if err != nil {
		return nil, err
	}
	// Keyed by the formula text: an edit is a new entry.
	key := "custom/" + assetID.String() + "/" + c.Formula
	if e, ok := s.cache.Get(key, v.Version); ok {
		return e.(*Encoded).AppendWindow(b, from, to), nil
	}
	expr, err := c.Parse()
	if err != nil {
		return nil, err
	}
	vals, err := expr.Eval(formulaSeries(bars))
	if err != nil {
		return nil, err
	}
	e := Encode(Output{Dates: bars.Dates, Value: vals})
	s.cache.Put(key, v.Version, e, e.size())
	return e.AppendWindow(b, from, to), nil
}

// IsDefined reports whether x is a value: not NaN and not ±Inf.
func IsDefined(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
