package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
)

// keysUsage is the help of `tradekit keys`.
const keysUsage = `usage: tradekit keys <subcommand> [flags]

subcommands:
  create  create an API key, and its user if new (--email, --name, --plan, --admin, --db)
  list    list a user's API keys: prefix, name, created, last used, status (--email, --db)
  delete  revoke an API key (--id, --db)

Run 'tradekit keys <subcommand> -h' for a subcommand's flags.`

// keys runs `tradekit keys`.
func (e *env) keys(ctx context.Context, args []string) error {
	return e.runSubcommand(ctx, "keys", "keys", keysUsage, args,
		subcommand{"create", e.keysCreate}, subcommand{"list", e.keysList}, subcommand{"delete", e.keysDelete})
}

// keysCreate runs `tradekit keys create`.
func (e *env) keysCreate(ctx context.Context, args []string) error {
	fs, dsn := e.flags("keys create", "--email EMAIL --name NAME [--plan SLUG] [--admin] [--db DSN]",
		"Create an API key for the user of EMAIL, creating the user when the email is unknown.\n"+
			"The full key is printed alone on the last line; it is shown only here.")
	email := fs.String("email", "", "the user's `EMAIL`; the user is created when unknown (required)")
	name := fs.String("name", "", "a `NAME` for the key, e.g. the environment it serves (required)")
	plan := fs.String("plan", "", "the user's plan `SLUG` (default free for a new user)")
	admin := fs.Bool("admin", false, "make the user an account administrator")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if !strings.Contains(*email, "@") {
		return fmt.Errorf("keys create: --email is required and must be an email address")
	}
	if strings.TrimSpace(*name) == "" {
		return fmt.Errorf("keys create: --name is required")
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	st := billing.NewStore(db)
	g := billing.KeyGrant{Email: *email, Name: strings.Split(*email, "@")[0], KeyName: strings.TrimSpace(*name),
		Admin: *admin, Now: time.Now()}
	if *plan != "" {
		p, err := planBySlug(ctx, st, *plan)
		if err != nil {
			return fail("--plan", err)
		}
		g.Plan = &p
	}
	k, err := st.GrantKey(ctx, g)
	if err != nil {
		return err
	}
	u := k.User
	switch {
	case k.Created:
		fmt.Fprintln(e.stdout, createdUser(u, k.Plan, ""))
		if !u.IsAdmin {
			fmt.Fprintln(e.stdout, "note: a member cannot manage keys or members in the dashboard; make it an administrator with "+
				setRoleCommand(u.Email, "admin"))
		}
	case k.Updated:
		fmt.Fprintf(e.stdout, "updated user %s: plan %s, %s\n", u.Email, k.Plan.Slug, roleName(u.IsAdmin))
	}
	fmt.Fprintf(e.stdout, "created key %s %q (%s…) for %s; it is shown only once:\n", k.Key.ID, k.Key.Name, k.Key.Prefix, u.Email)
	fmt.Fprintln(e.stdout, k.Secret)
	return nil
}

// keysList runs `tradekit keys list`.
func (e *env) keysList(ctx context.Context, args []string) error {
	fs, dsn := e.flags("keys list", "--email EMAIL [--db DSN]",
		"List the user's API keys: id, prefix, name, created, last used and status; never the secret.")
	email := fs.String("email", "", "the `EMAIL` of the user whose keys to list (required)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *email == "" {
		return fmt.Errorf("keys list: --email is required")
	}
	db, u, err := e.openUser(ctx, *dsn, *email)
	if err != nil {
		return err
	}
	defer db.Close()
	keys, err := billing.NewStore(db).Keys(ctx, u.ID)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPREFIX\tNAME\tCREATED\tLAST USED\tSTATUS")
	for _, k := range keys {
		status := "active"
		if k.RevokedAt != nil {
			status = "revoked " + k.RevokedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name,
			k.CreatedAt.UTC().Format(time.RFC3339), formatTime(k.LastUsedAt), status)
	}
	return tw.Flush()
}

// keysDelete runs `tradekit keys delete`.
func (e *env) keysDelete(ctx context.Context, args []string) error {
	fs, dsn := e.flags("keys delete", "--id ID [--db DSN]",
		"Revoke an API key; running servers refuse it within 5 seconds. Revoking a revoked key is an error.")
	idFlag := fs.String("id", "", "the `ID` of the key to revoke, as keys list shows it (required)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	id, err := uuid.Parse(*idFlag)
	if err != nil {
		return fmt.Errorf("keys delete: --id must be a key id (a UUID), got %q", *idFlag)
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	k, err := billing.NewStore(db).RevokeKey(ctx, id, time.Now())
	if errors.Is(err, tradekit.ErrConflict) {
		return fmt.Errorf("keys delete: key %s %q (%s…) is already revoked, since %s; nothing changed",
			k.ID, k.Name, k.Prefix, formatTime(k.RevokedAt))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked key %s %q (%s…); running servers refuse it within 5 seconds\n", k.ID, k.Name, k.Prefix)
	return nil
}

// formatTime formats t in UTC as RFC 3339, and nil as "never".
func formatTime(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
