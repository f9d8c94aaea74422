package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
)

// usersUsage is the help of `tradekit users`.
const usersUsage = `usage: tradekit users <subcommand> [flags]

subcommands:
  create        create a user who signs in to the dashboard (--email, --name, --plan, --admin, --db)
  set-password  set a user's dashboard password (--email, --db)

The password is read from the first line of standard input, never from a flag
(flags show in process lists and shell history):

  printf '%s\n' "$PASSWORD" | tradekit users create --email ada@example.com --admin

Run 'tradekit users <subcommand> -h' for a subcommand's flags.`

// users runs `tradekit users`.
func (e *env) users(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("users: give a subcommand: create or set-password (see 'tradekit users -h')")
	}
	if isHelp(args[0]) {
		return e.help(usersUsage)
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "create":
		return e.usersCreate(ctx, rest)
	case "set-password":
		return e.usersSetPassword(ctx, rest)
	default:
		return fmt.Errorf("users: unknown subcommand %q: want create or set-password", sub)
	}
}

// readPassword reads the password from the first line of stdin and hashes
// it, refusing one that breaks billing.CheckPasswordRules.
func (e *env) readPassword(cmd string) (string, error) {
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("%s: give the password on standard input", cmd)
	}
	h, err := billing.HashPassword(strings.TrimRight(line, "\r\n"), billing.DefaultPasswordParams())
	if err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	return h, nil
}

// usersCreate runs `tradekit users create`.
func (e *env) usersCreate(ctx context.Context, args []string) error {
	fs, dsn := e.flags("users create", "--email EMAIL [--name NAME] [--plan SLUG] [--admin] [--db DSN]",
		"Create a user who signs in to the dashboard with EMAIL and the password read from stdin.")
	email := fs.String("email", "", "the user's `EMAIL` (required)")
	name := fs.String("name", "", "the user's `NAME` (default the email's local part)")
	plan := fs.String("plan", "free", "the user's plan `SLUG`")
	admin := fs.Bool("admin", false, "make the user an account administrator, who may create and delete API keys")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if !strings.Contains(*email, "@") {
		return errors.New("users create: --email is required and must be an email address")
	}
	if *name == "" {
		*name = strings.Split(*email, "@")[0]
	}
	hash, err := e.readPassword("users create")
	if err != nil {
		return err
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var u billing.User
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		st := billing.NewStore(tx)
		p, err := st.Plan(ctx, *plan)
		if err != nil {
			return err
		}
		u = billing.User{Email: *email, Name: *name, PlanID: p.ID, IsAdmin: *admin, PasswordHash: &hash}
		return st.CreateUser(ctx, &u, time.Now())
	})
	if err != nil {
		return fmt.Errorf("users create: %w", err)
	}
	fmt.Fprintf(e.stdout, "created user %s (%s, plan %s, admin %t)\n", u.Email, u.ID, *plan, u.IsAdmin)
	return nil
}

// usersSetPassword runs `tradekit users set-password`.
func (e *env) usersSetPassword(ctx context.Context, args []string) error {
	fs, dsn := e.flags("users set-password", "--email EMAIL [--db DSN]",
		"Set the dashboard password of the user of EMAIL to the one read from stdin.")
	email := fs.String("email", "", "the user's `EMAIL` (required)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *email == "" {
		return errors.New("users set-password: --email is required")
	}
	hash, err := e.readPassword("users set-password")
	if err != nil {
		return err
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	st := billing.NewStore(db)
	u, err := st.UserByEmail(ctx, *email)
	if err == nil {
		err = st.SetPassword(ctx, u.ID, hash)
	}
	if err != nil {
		return fmt.Errorf("users set-password: %w", err)
	}
	fmt.Fprintf(e.stdout, "set the password of %s\n", u.Email)
	return nil
}
