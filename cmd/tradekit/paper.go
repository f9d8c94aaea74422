package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tradekit/tradekit/brokers/paper/portal"
)

// paperUsage is the help of `tradekit paper`.
const paperUsage = `usage: tradekit paper apps <subcommand> [flags]

subcommands:
  apps create  register a third-party app with the paper broker (--name, --redirect-uri, --db)
  apps list    list the registered apps (--db)
  apps delete  unregister an app and revoke its tokens (--id, --db)

A registered app connects paper accounts through the paper broker's OAuth flow
(authorization code with PKCE S256), as it would connect Alpaca accounts. Its
client secret is printed once, by apps create, and stored only as a hash.

Run 'tradekit paper apps <subcommand> -h' for a subcommand's flags.`

// paperCmd runs `tradekit paper`.
func (e *env) paperCmd(ctx context.Context, args []string) error {
	if len(args) == 0 || isHelp(args[0]) {
		return e.help(paperUsage)
	}
	if args[0] != "apps" {
		return fmt.Errorf("paper: unknown subcommand %q: want apps", args[0])
	}
	return e.runSubcommand(ctx, "paper apps", "paper", paperUsage, args[1:], subcommand{"create", e.paperAppsCreate},
		subcommand{"list", e.paperAppsList}, subcommand{"delete", e.paperAppsDelete})
}

// paperAppsCreate runs `tradekit paper apps create`.
func (e *env) paperAppsCreate(ctx context.Context, args []string) error {
	fs, dsn := e.flags("paper apps create", "--name NAME --redirect-uri URI [--redirect-uri URI…] [--db DSN]",
		"Register a third-party app with the paper broker; print its client_id and client_secret (shown only here).")
	name := fs.String("name", "", "the app's `NAME`, shown on the consent page (required)")
	var uris []string
	fs.Func("redirect-uri", "an absolute `URI` the broker may send users back to (required; repeat for several)", func(s string) error {
		uris = append(uris, s)
		return nil
	})
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" || len(uris) == 0 {
		return errors.New("paper apps create: --name and --redirect-uri are required")
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	app, secret, err := portal.CreateApp(ctx, db, *name, uris, time.Now())
	if err != nil {
		return fmt.Errorf("paper apps create: %w", err)
	}
	fmt.Fprintf(e.stdout, "client_id: %s\nclient_secret: %s\n", app.ClientID, secret)
	fmt.Fprintln(e.stderr, "The client secret is shown only now: store it in the app's configuration.")
	return nil
}

// paperAppsList runs `tradekit paper apps list`.
func (e *env) paperAppsList(ctx context.Context, args []string) error {
	fs, dsn := e.flags("paper apps list", "[--db DSN]", "List the apps registered with the paper broker.")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	apps, err := portal.Apps(ctx, db)
	if err != nil {
		return fmt.Errorf("paper apps list: %w", err)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT_ID\tNAME\tREDIRECT_URIS\tCREATED")
	for _, a := range apps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.ClientID, a.Name, strings.Join(a.RedirectURIs, " "), a.CreatedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

// paperAppsDelete runs `tradekit paper apps delete`.
func (e *env) paperAppsDelete(ctx context.Context, args []string) error {
	fs, dsn := e.flags("paper apps delete", "--id ID [--db DSN]",
		"Unregister an app and revoke every token issued to it; the paper accounts it opened stay.")
	id := fs.String("id", "", "the app's client `ID`, as apps list shows it (required)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *id == "" {
		return errors.New("paper apps delete: --id is required")
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := portal.DeleteApp(ctx, db, *id, time.Now()); err != nil {
		return fmt.Errorf("paper apps delete: %w", err)
	}
	fmt.Fprintf(e.stdout, "deleted app %s and revoked its tokens\n", *id)
	return nil
}
