package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

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

	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer buildProfilesInBackground(ctx, db, log)() // stopped and waited for before db closes
	return server.New(server.Config{Logger: log}, db).Serve(ctx, l)
}
