package profiles

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata"
)

// BuildConfig configures [Build]. The zero value builds, on every core,
// the profiles of the assets whose prices changed since their stored
// profile, with the engine's default [Config].
type BuildConfig struct {
	// Config holds the engine's parameters.
	Config Config
	// All rebuilds every asset's profile, changed or not.
	All bool
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
	// UpToDate is the number of assets left alone because their stored
	// profile was built from their current prices.
	UpToDate int
	// OtherShards is the number of assets left to the other shards.
	OtherShards int
	// Short lists the assets with too few bars for a profile (fewer than
	// [MinBars], or the Config's longest window plus one).
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
		panic("profiles: ShardOf with fewer than one shard")
	}
	h := fnv.New64a()
	h.Write(id[:])
	return int(h.Sum64() % uint64(n))
}

// loaded is one asset of the universe as read from the database.
type loaded struct {
	asset   marketdata.Asset
	version int64
	series  Series // High and Low only for the assets to build
	inShard bool
	build   bool
}

// Build computes and stores the profiles of the assets whose prices
// changed since their stored profile (every asset with cfg.All), reading
// prices from prices and writing to store.
//
// It reads every asset's daily closes once (all of them are peers for
// correlations) on cfg.Workers goroutines, prepares the [Universe] once,
// then computes the profiles on cfg.Workers goroutines and stores them in
// batches of [SaveBatch], one transaction each. An asset's price version
// is read before its prices, so a profile is never labelled with a newer
// version than the prices it was computed from; prices written during a
// build are picked up by the next one.
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
	var res BuildResult
	ecfg, err := cfg.Config.resolve()
	if err != nil {
		return res, err
	}
	if cfg.Shards < 0 || (cfg.Shards > 1 && (cfg.Shard < 0 || cfg.Shard >= cfg.Shards)) {
		return res, fmt.Errorf("profiles: shard %d of %d: want 0 <= shard < shards: %w", cfg.Shard, cfg.Shards, tradekit.ErrInvalid)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	assets, err := prices.Assets(ctx)
	if err != nil {
		return res, err
	}
	var stored map[uuid.UUID]int64
	if !cfg.All {
		if stored, err = store.Versions(ctx); err != nil {
			return res, err
		}
	}
	res.Assets = len(assets)

	// Load every asset's prices.
	all := make([]loaded, len(assets))
	err = parallel(ctx, workers, len(assets), func(ctx context.Context, i int) error {
		a := assets[i]
		v, err := prices.PriceVersion(ctx, a.ID)
		if err != nil {
			return err
		}
		cols, err := prices.PriceColumns(ctx, a.ID)
		if err != nil {
			return err
		}
		l := loaded{asset: a, version: v.Version, inShard: cfg.Shards <= 1 || ShardOf(a.ID, cfg.Shards) == cfg.Shard}
		prev, ok := stored[a.ID]
		l.build = l.inShard && (cfg.All || !ok || prev != v.Version)
		dates := make([]time.Time, len(cols.Dates))
		for j, d := range cols.Dates {
			dates[j] = d.Time(time.UTC)
		}
		l.series = Series{ID: a.ID.String(), Dates: dates, Close: cols.Close}
		if l.build {
			l.series.High, l.series.Low = cols.High, cols.Low
		}
		all[i] = l
		return nil
	})
	if err != nil {
		return res, err
	}
	peers := make([]Peer, 0, len(all))
	var todo []int
	minBars := ecfg.minBars()
	for i, l := range all {
		if len(l.series.Dates) > 0 {
			peers = append(peers, Peer{ID: l.series.ID, Symbol: l.asset.Symbol, Dates: l.series.Dates, Close: l.series.Close})
		}
		switch {
		case !l.inShard:
			res.OtherShards++
		case !l.build:
			res.UpToDate++
		case len(l.series.Dates) < minBars:
			res.Short = append(res.Short, Skipped{AssetID: l.asset.ID, Symbol: l.asset.Symbol, Bars: len(l.series.Dates),
				Reason: fmt.Sprintf("%d daily bars, %d needed", len(l.series.Dates), minBars)})
		default:
			todo = append(todo, i)
		}
	}
	u, err := NewUniverse(peers)
	if err != nil {
		// The store returns dates in order, one per day: only a broken
		// database gets here.
		return res, fmt.Errorf("profiles: build: %w", err)
	}
	res.Load = time.Since(start)
	log.Info("profiles: prices loaded", "assets", len(assets), "to_build", len(todo),
		"load", res.Load.Round(time.Millisecond))

	// Compute on the workers, store in batches here.
	type outcome struct {
		i   int
		rec Record
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	out := make(chan outcome, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				l := all[i]
				p, err := u.Compute(l.series, cfg.Config)
				o := outcome{i: i, err: err}
				if err == nil {
					o.rec, o.err = NewRecord(l.asset.ID, l.version, p, now().UTC().Truncate(time.Millisecond))
				}
				select {
				case out <- o:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, i := range todo {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(out)
	}()

	batch := make([]Record, 0, SaveBatch)
	nextLog := len(todo) / 10
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := store.Save(ctx, batch); err != nil {
			return err
		}
		res.Built += len(batch)
		batch = batch[:0]
		if res.Built >= nextLog && res.Built < len(todo) {
			log.Info("profiles: building", "built", res.Built, "of", len(todo))
			nextLog = res.Built + max(1, len(todo)/10)
		}
		return nil
	}
	for o := range out {
		if o.err != nil {
			l := all[o.i]
			res.Failed = append(res.Failed, Skipped{AssetID: l.asset.ID, Symbol: l.asset.Symbol,
				Bars: len(l.series.Dates), Reason: o.err.Error()})
			continue
		}
		all[o.i] = loaded{} // let the asset's prices go
		batch = append(batch, o.rec)
		if len(batch) == SaveBatch {
			if err := flush(); err != nil {
				cancel()
				return finish(res, start), err
			}
		}
	}
	if err := context.Cause(ctx); err != nil {
		return finish(res, start), err
	}
	if err := flush(); err != nil {
		return finish(res, start), err
	}
	return finish(res, start), nil
}

// finish sorts the result's lists and stamps its duration.
func finish(res BuildResult, start time.Time) BuildResult {
	for _, ss := range [][]Skipped{res.Short, res.Failed} {
		sort.Slice(ss, func(i, j int) bool { return ss[i].Symbol < ss[j].Symbol })
	}
	res.Elapsed = time.Since(start)
	return res
}

// parallel runs fn(i) for i in [0, n) on workers goroutines and returns
// the first error, after which the remaining calls are not made.
func parallel(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		}()
	}
loop:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break loop
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
