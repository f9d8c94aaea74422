package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
)

// seed runs `tradekit seed`: load the demo data set. Loading it again
// changes nothing.
func (e *env) seed(ctx context.Context, args []string) error {
	fs, dsn := e.flags("seed", "[--db DSN]",
		"Load the deterministic demo data set; its prices are SYNTHETIC. Loading it again changes nothing.")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	loaded, err := demo.IsLoaded(ctx, marketdata.NewStore(db))
	if err != nil {
		return err
	}
	if loaded {
		fmt.Fprintln(e.stdout, "the demo data set is loaded already: nothing to do (its prices are SYNTHETIC)")
		return nil
	}
	start := time.Now()
	set, err := loadDemo(ctx, db)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "loaded the demo data set in %s: %d assets, %d daily price records from %s to %s, %d industries, %d indexes\n",
		time.Since(start).Round(time.Millisecond), len(set.Assets), len(set.Prices), demo.Start, demo.End, len(set.Industries), len(set.Indexes))
	fmt.Fprintln(e.stdout, "note: demo prices are SYNTHETIC; the companies, coins and funds are fictional, and so are the")
	fmt.Fprintf(e.stdout, "%d demo leaders of copy trading, whose paper-broker trades follow a simulation\n", len(copytrading.DemoLeaders))
	return nil
}

// loadDemo generates the demo data set and loads it in one transaction.
func loadDemo(ctx context.Context, db *bun.DB) (*demo.Set, error) {
	set, err := demo.Generate(demo.Config{})
	if err != nil {
		return nil, err
	}
	err = marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
		return demo.Load(ctx, st, set)
	})
	if err != nil {
		return nil, fail("seed", err)
	}
	if err := loadDemoLeaders(ctx, db); err != nil {
		return nil, fail("seed", err)
	}
	return set, nil
}

// loadDemoLeaders stores the demo leaders (see copytrading.DemoLeaders),
// each a user of the free plan with the email <slug>@demo.tradekit.example
// and no API key.
func loadDemoLeaders(ctx context.Context, db *bun.DB) error {
	st := billing.NewStore(db)
	plan, err := st.Plan(ctx, "free")
	if err != nil {
		return err
	}
	users := make([]uuid.UUID, len(copytrading.DemoLeaders))
	for i, l := range copytrading.DemoLeaders {
		email := l.Slug + "@demo.tradekit.example"
		u, err := st.UserByEmail(ctx, email)
		if errors.Is(err, tradekit.ErrNotFound) {
			u = billing.User{Email: email, Name: l.DisplayName, PlanID: plan.ID}
			err = st.CreateUser(ctx, &u, time.Now())
		}
		if err != nil {
			return err
		}
		users[i] = u.ID
	}
	return copytrading.LoadDemoLeaders(ctx, db, users, time.Now())
}

// seedIfEmpty loads the demo data set into the database of dsn when it
// holds no assets. serve then warns that its prices are synthetic, as on
// every start that serves them (see warnIfDemo).
func (e *env) seedIfEmpty(ctx context.Context, dsn string, log *slog.Logger) error {
	db, err := e.open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := marketdata.NewStore(db).CountAssets(ctx)
	if err != nil || n > 0 {
		return err
	}
	log.Info("the database holds no assets: loading the demo data set (use --no-seed to skip)")
	start := time.Now()
	set, err := loadDemo(ctx, db)
	if err != nil {
		return err
	}
	log.Info("demo data loaded", "assets", len(set.Assets), "prices", len(set.Prices),
		"took", time.Since(start).Round(time.Millisecond))
	return nil
}
