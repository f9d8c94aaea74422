package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/profiles/profiledb"
)

// profilesUsage is the help of `tradekit profiles`.
const profilesUsage = `usage: tradekit profiles <subcommand> [flags]

subcommands:
  build  build the analytics profiles of the assets whose prices changed (--all, --shard, --workers, --db)

Run 'tradekit profiles build -h' for its flags.`

// profilesCmd runs `tradekit profiles build`.
func (e *env) profilesCmd(ctx context.Context, args []string) error {
	if len(args) > 0 && isHelp(args[0]) {
		return e.help(profilesUsage)
	}
	if len(args) == 0 || args[0] != "build" {
		return errors.New("profiles: give a subcommand: build (see 'tradekit profiles -h')")
	}
	fs, dsn := e.flags("profiles build", "[--all] [--unadjusted] [--shard I/N] [--workers N] [--db DSN]",
		"Build the analytics profiles of the assets whose prices changed since their last build (--all: of\n"+
			"every asset). Shards split the work across processes.")
	all := fs.Bool("all", false, "rebuild every asset's profile, not only those whose prices changed since")
	unadjusted := fs.Bool("unadjusted", false, "compute from prices as traded, not back-adjusted for splits and dividends (rebuild with --all after changing it)")
	shard := fs.String("shard", "", "build only shard `I/N` (I from 0), to split the work across processes")
	workers := fs.Int("workers", 0, "`N` goroutines loading and computing (default: one per core)")
	if err := e.parse(fs, args[1:]); err != nil {
		return err
	}
	// The summary goes to stdout; the build's progress lines only with
	// --verbose, else its warnings alone, to stderr.
	level := slog.LevelWarn
	if e.verbose() {
		level = slog.LevelInfo
	}
	cfg := profiledb.BuildConfig{All: *all, Unadjusted: *unadjusted, Workers: *workers,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))}
	if *shard != "" {
		var err error
		if cfg.Shard, cfg.Shards, err = parseShard(*shard); err != nil {
			return err
		}
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := buildProfiles(ctx, db, cfg)
	if err != nil {
		return fail("profiles build", err)
	}
	fmt.Fprintln(e.stdout, res)
	return nil
}

// parseShard parses "I/N" with 0 <= I < N.
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("profiles build: --shard %q: want I/N with 0 <= I < N, e.g. 0/4", s)
	}
	return i, n, nil
}

func buildProfiles(ctx context.Context, db *bun.DB, cfg profiledb.BuildConfig) (profiledb.BuildResult, error) {
	return profiledb.Build(ctx, marketdata.NewStore(db), profiledb.NewStore(db), cfg)
}

// buildProfilesInBackground starts an incremental profile build on db and
// returns a function that stops it (if still running) and waits for it.
// The build logs its progress and a summary line to log; a failure is
// logged, never fatal: the server serves the profiles it has.
func buildProfilesInBackground(ctx context.Context, db *bun.DB, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		log.Info("profiles: incremental build started in the background")
		res, err := buildProfiles(ctx, db, profiledb.BuildConfig{Logger: log})
		switch {
		case ctx.Err() != nil:
			log.Info("profiles: build stopped", "built", res.Built)
		case err != nil:
			log.Error("profiles: build failed; run 'tradekit profiles build' to retry", "built", res.Built, "err", err)
		default:
			log.Info(buildSummary(res, nil))
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

// buildProfilesAfterImport rebuilds the profiles of the assets whose
// prices changed, reporting on stderr (stdout keeps the import's one
// summary line). A failure is reported but leaves the import standing.
// imported reports whether a symbol is one of this import's: only those
// are named among the assets too short for a profile (see
// [buildSummary]).
func (e *env) buildProfilesAfterImport(ctx context.Context, db *bun.DB, imported func(symbol string) bool) {
	res, err := buildProfiles(ctx, db, profiledb.BuildConfig{})
	if err != nil {
		fmt.Fprintf(e.stderr, "tradekit: warning: the import stands, but building profiles failed "+
			"(run 'tradekit profiles build'): %v\n", err)
		return
	}
	fmt.Fprintln(e.stderr, buildSummary(res, imported))
}

// maxListedShort is how many assets too short for a profile a summary
// names.
const maxListedShort = 5

// buildSummary returns the one line that an import or serve's start-up
// says of a profile build. Unlike res.String, which `tradekit profiles
// build` prints, it names only the assets too short for a profile that
// name (nil: none) picks, at most [maxListedShort] of them, and counts
// the others: an asset that stays short would otherwise be listed again
// at every import and every start.
func buildSummary(res profiledb.BuildResult, name func(symbol string) bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "profiles: %d built, %d up to date", res.Built, res.UpToDate)
	if res.OtherShards > 0 {
		fmt.Fprintf(&b, ", %d in other shards", res.OtherShards)
	}
	if len(res.Short) > 0 {
		fmt.Fprintf(&b, ", %d too short for a profile", len(res.Short))
		var named []string
		for _, s := range res.Short {
			if name != nil && name(s.Symbol) {
				named = append(named, s.Symbol+": "+s.Reason)
			}
		}
		others := len(res.Short) - min(len(named), maxListedShort)
		if len(named) > maxListedShort {
			named = named[:maxListedShort]
		}
		switch {
		case len(named) == 0:
			b.WriteString(" ('tradekit profiles build' lists them)")
		case others > 0:
			fmt.Fprintf(&b, " (%s, and %d more that 'tradekit profiles build' lists)", strings.Join(named, ", "), others)
		default:
			fmt.Fprintf(&b, " (%s)", strings.Join(named, ", "))
		}
	}
	if len(res.Failed) > 0 {
		fmt.Fprintf(&b, ", %d failed (%s: %s", len(res.Failed), res.Failed[0].Symbol, res.Failed[0].Reason)
		if len(res.Failed) > 1 {
			b.WriteString(", …")
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; done in %s", res.Elapsed.Round(time.Millisecond))
	return b.String()
}
