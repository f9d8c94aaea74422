package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

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
	cfg := profiledb.BuildConfig{All: *all, Unadjusted: *unadjusted, Workers: *workers,
		Logger: slog.New(slog.NewTextHandler(e.stderr, nil))}
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
			log.Info(res.String())
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
func (e *env) buildProfilesAfterImport(ctx context.Context, db *bun.DB) {
	res, err := buildProfiles(ctx, db, profiledb.BuildConfig{})
	if err != nil {
		fmt.Fprintf(e.stderr, "tradekit: warning: the import stands, but building profiles failed "+
			"(run 'tradekit profiles build'): %v\n", err)
		return
	}
	fmt.Fprintln(e.stderr, res)
}
