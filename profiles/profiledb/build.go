package profiledb

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
)

// BuildConfig configures [Build]. The zero value builds, on every core,
// the profiles of the assets whose prices (or corporate actions) changed
// since their stored profile, over adjusted prices, with the engine's
// default [Config].
type BuildConfig struct {
	// Config holds the engine's parameters.
	Config profiles.Config
	// All rebuilds every asset's profile, changed or not.
	All bool
	// Unadjusted computes from the prices as traded. By default profiles
	// are computed from the prices back-adjusted for splits and dividends
	// (marketdata.Store.AdjustedPriceColumns), so that a split is not a
	// crash and a dividend not a loss. The stored profiles do not record
	// which: after changing it, rebuild with All.
	Unadjusted bool
	// Workers is the number of goroutines loading prices and computing
	// profiles. Default runtime.GOMAXPROCS(0).
	Workers int
	// Shard and Shards split the build across processes: when Shards > 1,
	// only the assets with ShardOf(id, Shards) == Shard are built (every
	// asset is still loaded, as a peer for correlations). 0 <= Shard < Shards.
	Shard, Shards int
	// Now is the clock of the profiles' UpdatedAt. Default time.Now.
	Now func() time.Time
	// Logger receives progress lines (loading done, then every tenth of
	// the profiles stored). Nil logs nothing.
	Logger *slog.Logger
}

// Skipped is an asset [Build] left without a new profile, and why.
type Skipped struct {
	AssetID uuid.UUID
	Symbol  string
	// Bars is the asset's number of daily bars.
	Bars int
	// Reason says why, e.g. "100 daily bars, 253 needed".
	Reason string
}

// BuildResult reports what [Build] did.
type BuildResult struct {
	// Assets is the number of assets in the universe (every asset, as a
	// peer for correlations).
	Assets int
	// Built is the number of profiles computed and stored.
	Built int
	// Incremental is how many of those Built were updated from the state
	// their last profile left (one new bar since, nothing changed before
	// it), rather than computed in full.
	Incremental int
	// UpToDate is the number of assets left alone because their stored
	// profile was built from their current prices.
	UpToDate int
	// OtherShards is the number of assets left to the other shards.
	OtherShards int
	// Short lists the assets with too few bars for a profile (fewer than
	// profiles.MinBars, or the Config's longest window plus one).
	Short []Skipped
	// Failed lists the assets whose prices the engine refused (its error
	// wraps [tradekit.ErrInvalid]), with the error's message.
	Failed []Skipped
	// Load is the time spent reading prices and preparing the universe;
	// Elapsed the whole build's.
	Load, Elapsed time.Duration
}

// String returns a one-line summary, naming the first few short or failed
// assets.
func (r BuildResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "profiles: %d built, %d up to date", r.Built, r.UpToDate)
	if r.OtherShards > 0 {
		fmt.Fprintf(&b, ", %d in other shards", r.OtherShards)
	}
	list := func(what string, ss []Skipped) {
		if len(ss) == 0 {
			return
		}
		fmt.Fprintf(&b, ", %d %s (", len(ss), what)
		for i, s := range ss {
			if i == 5 {
				fmt.Fprintf(&b, ", …")
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %s", s.Symbol, s.Reason)
		}
		b.WriteString(")")
	}
	list("too short", r.Short)
	list("failed", r.Failed)
	fmt.Fprintf(&b, "; %d assets in the universe; loaded in %s, done in %s", r.Assets,
		r.Load.Round(time.Millisecond), r.Elapsed.Round(time.Millisecond))
	return b.String()
}

// ShardOf returns the shard, from 0 to n-1, of the asset id among n: the
// FNV-1a hash of the id's 16 bytes modulo n, so that an asset stays in its
// shard whatever other assets come and go. n must be at least 1.
func ShardOf(id uuid.UUID, n int) int {
	if n < 1 {
		panic("profiledb: ShardOf with fewer than one shard")
	}
	h := fnv.New64a()
	h.Write(id[:])
	return int(h.Sum64() % uint64(n))
}

// Build computes and stores the profiles of the assets whose prices
// changed since their stored profile (every asset with cfg.All), reading
// prices from prices and writing to store.
//
// It reads every asset's daily closes once (all of them are peers for
// correlations), 250 assets per query on cfg.Workers goroutines, prepares
// the profiles.Universe once, then computes the profiles with
// profiles.Universe.ComputeAll (the correlations of the assets on the
// calendar as one blocked matrix product, the rest of each profile on
// cfg.Workers goroutines) and stores them in batches of [SaveBatch], one
// transaction each. An asset's price
// version is read before its prices, so a profile is never labelled with
// a newer version than the prices it was computed from; prices written
// during a build are picked up by the next one.
//
// Assets with too few bars, or whose prices the engine refuses, are left
// out and listed in the result; they do not fail the build. Build returns
// an error wrapping [tradekit.ErrInvalid] if cfg is out of range, and the
// first database error or ctx's error otherwise, with the result so far
// (the batches already stored stay stored).
//
// A profile's correlations are computed against the peers' prices of the
// build that made it: an incremental build does not revisit an unchanged
// asset whose peers changed (cfg.All does).
func Build(ctx context.Context, prices *marketdata.Store, store *Store, cfg BuildConfig) (BuildResult, error) {
	start := time.Now()
	b, err := newBuilder(prices, store, cfg)
	if err != nil {
		return BuildResult{}, err
	}
	err = b.build(ctx)
	for _, ss := range [][]Skipped{b.res.Short, b.res.Failed} {
		sort.Slice(ss, func(i, j int) bool { return ss[i].Symbol < ss[j].Symbol })
	}
	b.res.Elapsed = time.Since(start)
	return b.res, err
}

// builder is one run of [Build]: its settings with the defaults filled
// in, and the result so far.
type builder struct {
	prices  *marketdata.Store
	store   *Store
	cfg     BuildConfig // Workers, Now and Logger set
	engine  profiles.Config
	minBars int
	res     BuildResult
}

// loaded is one asset of the universe as read from the database.
type loaded struct {
	asset   marketdata.Asset
	version int64
	bars    profiles.Asset // High and Low only for the assets to build
	inShard bool
	build   bool
}

// newBuilder checks cfg and fills in its defaults.
func newBuilder(prices *marketdata.Store, store *Store, cfg BuildConfig) (*builder, error) {
	if cfg.Shards < 0 || (cfg.Shards > 1 && (cfg.Shard < 0 || cfg.Shard >= cfg.Shards)) {
		return nil, fmt.Errorf("profiledb: shard %d of %d: want 0 <= shard < shards: %w", cfg.Shard, cfg.Shards, tradekit.ErrInvalid)
	}
	minBars, err := cfg.Config.MinBars()
	if err != nil {
		return nil, err
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &builder{prices: prices, store: store, cfg: cfg, engine: cfg.Config, minBars: minBars}, nil
}

// build loads the universe, picks the assets to build, and builds them.
func (b *builder) build(ctx context.Context) error {
	start := time.Now()
	all, err := b.load(ctx)
	if err != nil {
		return err
	}
	u, todo, err := b.plan(all)
	if err != nil {
		return err
	}
	b.res.Load = time.Since(start)
	b.cfg.Logger.Info("profiles: prices loaded", "assets", len(all), "to_build", len(todo),
		"load", b.res.Load.Round(time.Millisecond))
	return b.computeAndSave(ctx, u, all, todo)
}

// loadBatch is how many assets' price columns one query of load reads.
const loadBatch = 250

// load reads every asset, then the price versions and columns of loadBatch
// assets per query (marketdata.Store.PriceColumnsOf, the versions read
// before the columns, then AdjustedColumnsOf unless Unadjusted), batches
// on the workers. It keeps only the columns the engine reads: Dates and
// Close of every asset, High and Low of the assets to build; assets with
// the same dates share one slice of them.
func (b *builder) load(ctx context.Context) ([]loaded, error) {
	assets, err := b.prices.Assets(ctx)
	if err != nil {
		return nil, err
	}
	var stored map[uuid.UUID]int64
	if !b.cfg.All {
		if stored, err = b.store.Versions(ctx); err != nil {
			return nil, err
		}
	}
	b.res.Assets = len(assets)
	all := make([]loaded, len(assets))
	dates := sharedDates{}
	var mu sync.Mutex // guards dates
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(b.cfg.Workers)
	for lo := 0; lo < len(assets); lo += loadBatch {
		batch := assets[lo:min(lo+loadBatch, len(assets))]
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			ids := make([]uuid.UUID, len(batch))
			for i, a := range batch {
				ids[i] = a.ID
			}
			cols, err := b.prices.PriceColumnsOf(gctx, ids)
			if err != nil {
				return err
			}
			if !b.cfg.Unadjusted {
				if cols, err = b.prices.AdjustedColumnsOf(gctx, cols); err != nil {
					return err
				}
			}
			for i, a := range batch {
				vc := cols[a.ID] // an asset deleted since is left with no bars
				l := loaded{asset: a, version: vc.Version, inShard: b.cfg.Shards <= 1 || ShardOf(a.ID, b.cfg.Shards) == b.cfg.Shard}
				prev, ok := stored[a.ID]
				l.build = l.inShard && (b.cfg.All || !ok || prev != vc.Version)
				mu.Lock()
				d := dates.share(vc.Bars.Dates)
				mu.Unlock()
				l.bars = profiles.Asset{ID: a.ID.String(), Symbol: a.Symbol, Bars: ohlcv.Series{Dates: d, Close: vc.Bars.Close}}
				if l.build {
					l.bars.Bars.High, l.bars.Bars.Low = vc.Bars.High, vc.Bars.Low
				}
				all[lo+i] = l
			}
			return nil
		})
	}
	return all, g.Wait()
}

// sharedDates keeps one copy of each distinct list of dates, keyed by its
// length, first and last date: most assets of a market trade on the same
// days, and a date takes three words.
type sharedDates map[[3]calendar.Date][][]calendar.Date

// share returns the kept slice equal to d, keeping d if there is none.
func (s sharedDates) share(d []calendar.Date) []calendar.Date {
	if len(d) == 0 {
		return d
	}
	key := [3]calendar.Date{{Year: len(d)}, d[0], d[len(d)-1]}
	for _, k := range s[key] {
		if slices.Equal(k, d) {
			return k
		}
	}
	s[key] = append(s[key], d)
	return d
}

// plan counts the assets left alone, lists those too short, and returns
// the universe of every asset with prices and the indexes in all of the
// assets to build.
func (b *builder) plan(all []loaded) (*profiles.Universe, []int, error) {
	peers := make([]profiles.Asset, 0, len(all))
	var todo []int
	for i, l := range all {
		n := l.bars.Bars.Len()
		if n > 0 {
			peers = append(peers, l.bars)
		}
		switch {
		case !l.inShard:
			b.res.OtherShards++
		case !l.build:
			b.res.UpToDate++
		case n < b.minBars:
			b.res.Short = append(b.res.Short, Skipped{AssetID: l.asset.ID, Symbol: l.asset.Symbol, Bars: n,
				Reason: fmt.Sprintf("%d daily bars, %d needed", n, b.minBars)})
		default:
			todo = append(todo, i)
		}
	}
	u, err := profiles.NewUniverse(peers)
	if err != nil {
		// The store returns dates in order, one per day: only a broken
		// database gets here.
		return nil, nil, fmt.Errorf("profiledb: build: %w", err)
	}
	return u, todo, nil
}

// outcome is one asset's computed profile, or why there is none.
type outcome struct {
	i   int
	rec Record
	inc bool // updated from the stored state
	err error
}

// computeAndSave computes the profiles of all[i] for i in todo with
// profiles.Universe.ComputeAll on the workers and stores them here, in
// batches, as they come.
func (b *builder) computeAndSave(ctx context.Context, u *profiles.Universe, all []loaded, todo []int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan outcome, b.cfg.Workers)
	series := make([]profiles.Asset, len(todo))
	for k, i := range todo {
		series[k] = all[i].bars
	}
	states, err := b.states(ctx, all, todo)
	if err != nil {
		return err
	}
	go func() {
		defer close(out)
		// The config was checked by newBuilder: ComputeAllFrom cannot refuse it.
		_ = u.ComputeAllFrom(series, states, b.engine, b.cfg.Workers, func(k int, p profiles.Profile, st *profiles.State, inc bool, err error) bool {
			o := outcome{i: todo[k], inc: inc, err: err}
			if err == nil {
				o.rec, o.err = NewRecord(all[o.i].asset.ID, all[o.i].version, p, b.cfg.Now().UTC().Truncate(time.Millisecond))
			}
			if o.err == nil {
				o.rec.State, _ = st.MarshalBinary() // never fails
			}
			select {
			case out <- o:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()

	batch := make([]Record, 0, SaveBatch)
	saver := progress{log: b.cfg.Logger, total: len(todo), next: len(todo) / 10}
	for o := range out {
		switch {
		case err != nil: // drain, so the workers can stop
		case o.err != nil:
			l := all[o.i]
			b.res.Failed = append(b.res.Failed, Skipped{AssetID: l.asset.ID, Symbol: l.asset.Symbol,
				Bars: l.bars.Bars.Len(), Reason: o.err.Error()})
		default:
			all[o.i] = loaded{} // let the asset's prices go
			if o.inc {
				b.res.Incremental++
			}
			if batch = append(batch, o.rec); len(batch) == SaveBatch {
				err = b.save(ctx, &batch, &saver)
			}
			if err != nil {
				cancel()
			}
		}
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.save(ctx, &batch, &saver)
}

// states returns the stored states of all[i] for i in todo, decoded, by
// index in todo: nil for an asset with none, or one that does not decode
// (its profile is then computed in full), and nil altogether with All,
// which recomputes every profile in full.
func (b *builder) states(ctx context.Context, all []loaded, todo []int) ([]*profiles.State, error) {
	if b.cfg.All || len(todo) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, len(todo))
	for k, i := range todo {
		ids[k] = all[i].asset.ID
	}
	raw, err := b.store.States(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*profiles.State, len(todo))
	for k, id := range ids {
		if data, ok := raw[id]; ok {
			var st profiles.State
			if st.UnmarshalBinary(data) == nil {
				out[k] = &st
			}
		}
	}
	return out, nil
}

// save stores the batch, empties it and counts it as built.
func (b *builder) save(ctx context.Context, batch *[]Record, p *progress) error {
	if len(*batch) == 0 {
		return nil
	}
	if err := b.store.Save(ctx, *batch); err != nil {
		return err
	}
	b.res.Built += len(*batch)
	*batch = (*batch)[:0]
	p.report(b.res.Built)
	return nil
}

// progress logs a line every tenth of the profiles stored.
type progress struct {
	log         *slog.Logger
	total, next int
}

// report logs that done of the total are built, once a tenth more has
// been since the last line.
func (p *progress) report(done int) {
	if done >= p.next && done < p.total {
		p.log.Info("profiles: building", "built", done, "of", p.total)
		p.next = done + max(1, p.total/10)
	}
}
