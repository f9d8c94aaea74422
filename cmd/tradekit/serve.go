package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
	"github.com/tradekit/tradekit/server"
)

func (e *env) serve(ctx context.Context, args []string) error {
	fs, dsn := e.flags("serve", "[--addr HOST:PORT] [--db DSN] [--no-seed] [--log-format text|json]",
		"Apply pending migrations, load the demo data set into a database that holds no assets (unless\n"+
			"--no-seed), and serve the API until SIGINT or SIGTERM.")
	addr := fs.String("addr", "127.0.0.1:8080", "the address to listen on, `HOST:PORT`")
	noSeed := fs.Bool("no-seed", false, "do not load the demo data set into an empty database")
	logFormat := fs.String("log-format", "text", "the log `FORMAT`: text or json")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	var h slog.Handler
	switch *logFormat {
	case "text":
		h = slog.NewTextHandler(e.stderr, nil)
	case "json":
		h = slog.NewJSONHandler(e.stderr, nil)
	default:
		return fmt.Errorf("serve: --log-format must be text or json, got %q", *logFormat)
	}
	log := slog.New(h)
	if !*noSeed {
		if err := e.seedIfEmpty(ctx, *dsn, log); err != nil {
			return err
		}
	}

	db, err := openWith(ctx, *dsn, database.Options{Timeout: apiTimeout})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := warnIfDemo(ctx, db, log); err != nil {
		return err
	}
	// The profile build writes for long: it gets a handle of its own,
	// without the API's timeout.
	build, err := database.Open(ctx, *dsn, database.Options{})
	if err != nil {
		return err
	}
	defer build.Close()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer buildProfilesInBackground(ctx, build, log)() // stopped and waited for before build closes
	return server.New(server.Config{Logger: log}, db).Serve(ctx, l)
}

// apiTimeout bounds each wait of the server's PostgreSQL connections for a
// statement's reply (see [database.Options]): API queries take
// milliseconds, so a request fails within seconds when the database hangs
// or the network drops, instead of holding its connection.
const apiTimeout = 5 * time.Second

// warnIfDemo logs a warning when the database holds the demo data set:
// on every start that serves it, not only the one that loaded it.
func warnIfDemo(ctx context.Context, db *bun.DB, log *slog.Logger) error {
	ok, err := demo.IsLoaded(ctx, marketdata.NewStore(db))
	if err != nil || !ok {
		return err
	}
	log.Warn("the database holds the demo data set: its prices are SYNTHETIC and describe no real security, " +
		"its companies are fictional; import real data with 'tradekit import'")
	return nil
}
