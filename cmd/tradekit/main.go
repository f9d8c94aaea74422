package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/database"
)

const usage = `usage: tradekit <command> [flags]

commands:
  serve        serve the API (--addr, --db, --no-seed)
  migrate      apply pending database migrations (--db)
  keys create  create an API key, and its user if new (--email, --name, --plan, --admin, --db)
  keys list    list a user's API keys (--email, --db)
  keys delete  revoke an API key (--id, --db)
  seed         load the deterministic demo data set; prices are SYNTHETIC (--db)
  import prices --symbol SYM --file PATH [--name NAME] [--type stock] [--currency USD] [--exchange SYMBOL] [--db DSN]
               import daily OHLCV from CSV, creating the asset when unknown; re-imports update
  import industries|assets|indexes|constituents|profiles|fundamentals --file PATH [--db DSN]
               import reference data from CSV or JSON (see marketdata/IMPORT.md)
  profiles build [--all] [--shard I/N] [--workers N] [--db DSN]
               build the analytics profiles of the assets whose prices changed (--all: every asset)

Run 'tradekit <command> -h' for a command's flags.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "tradekit:", err)
		os.Exit(1)
	}
}

// run runs the command line args; getenv reads the environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return errors.New("no command given")
	}
	env := &env{getenv: getenv, stdout: stdout, stderr: stderr}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return env.serve(ctx, rest)
	case "migrate":
		return env.migrate(ctx, rest)
	case "keys":
		return env.keys(ctx, rest)
	case "seed":
		return env.seed(ctx, rest)
	case "import":
		return env.importCmd(ctx, rest)
	case "profiles":
		return env.profilesCmd(ctx, rest)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// env is what every command gets from the process.
type env struct {
	getenv         func(string) string
	stdout, stderr io.Writer
}

// flags returns a flag set for the command name with the --db flag.
func (e *env) flags(name string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("tradekit "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	def := e.getenv("TRADEKIT_DB")
	if def == "" {
		def = database.DefaultDSN
	}
	dsn := fs.String("db", def, "database: a postgres:// DSN or a SQLite file path (env TRADEKIT_DB)")
	return fs, dsn
}

// parse parses args into fs and refuses stray arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// open opens and migrates the database.
func (e *env) open(ctx context.Context, dsn string) (*bun.DB, error) {
	db, err := database.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if _, err := database.Migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (e *env) migrate(ctx context.Context, args []string) error {
	fs, dsn := e.flags("migrate")
	if err := parse(fs, args); err != nil {
		return err
	}
	db, err := database.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := database.Migrate(ctx, db)
	if err != nil {
		return err
	}
	for _, name := range applied {
		fmt.Fprintln(e.stdout, "applied", name)
	}
	fmt.Fprintf(e.stdout, "database is up to date (%d migrations applied now)\n", len(applied))
	return nil
}
