package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
)

// usersUsage is the help of `tradekit users`.
const usersUsage = `usage: tradekit users <subcommand> [flags]

subcommands:
  create        create a user who signs in to the dashboard (--email, --name, --plan, --admin, --account-of, --db)
  set-password  set a user's dashboard password (--email, --db)
  set-role      make a user an administrator of their account, or a member (--email, --role, --db)
  list          list the users of an account (--account-of, --db)

The password is read from the first line of standard input, never from a flag
(flags show in process lists and shell history):

  printf '%s\n' "$PASSWORD" | tradekit users create --email ada@example.com --admin

A user made by 'tradekit keys create' exists already: give it a password with
set-password, and make it an administrator with set-role.

Run 'tradekit users <subcommand> -h' for a subcommand's flags.`

// users runs `tradekit users`.
func (e *env) users(ctx context.Context, args []string) error {
	return e.runSubcommand(ctx, "users", "users", usersUsage, args, subcommand{"create", e.usersCreate},
		subcommand{"set-password", e.usersSetPassword}, subcommand{"set-role", e.usersSetRole}, subcommand{"list", e.usersList})
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
		return "", fail(cmd, err)
	}
	return h, nil
}

// usersCreate runs `tradekit users create`.
func (e *env) usersCreate(ctx context.Context, args []string) error {
	fs, dsn := e.flags("users create", "--email EMAIL [--name NAME] [--plan SLUG] [--admin] [--account-of EMAIL] [--db DSN]",
		"Create a user who signs in to the dashboard with EMAIL and the password read from stdin.")
	email := fs.String("email", "", "the user's `EMAIL` (required)")
	name := fs.String("name", "", "the user's `NAME` (default the email's local part)")
	plan := fs.String("plan", "free", "the user's plan `SLUG`")
	admin := fs.Bool("admin", false, "make the user an account administrator, who may create and delete API keys")
	accountOf := fs.String("account-of", "", "add the user to the account of the user of `EMAIL`, on that user's plan (default a new account)")
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
	// The reads, then the one insert of the user ([billing.Store.CreateUser]):
	// no transaction of the CLI's own.
	st := billing.NewStore(db)
	u := billing.User{Email: *email, Name: *name, IsAdmin: *admin, PasswordHash: &hash}
	var p billing.Plan
	var ofEmail string // the email of the user of --account-of, as stored
	if *accountOf != "" {
		of, err := st.UserByEmail(ctx, *accountOf)
		if err != nil {
			return fail("users create", fail("--account-of", err))
		}
		u.AccountID, u.PlanID, ofEmail = of.AccountID, of.PlanID, of.Email
		if p, err = st.PlanOf(ctx, of.ID); err != nil {
			return fail("users create", err)
		}
	} else {
		if p, err = planBySlug(ctx, st, *plan); err != nil {
			return fail("users create", fail("--plan", err))
		}
		u.PlanID = p.ID
	}
	err = st.CreateUser(ctx, &u, time.Now())
	if errors.Is(err, tradekit.ErrConflict) {
		return existingUser(ctx, db, *email, err)
	}
	if err != nil {
		return fail("users create", err)
	}
	fmt.Fprintln(e.stdout, createdUser(u, p, ofEmail))
	return nil
}

// createdUser returns the line that users create and keys create print
// for the new user u on plan p: both describe its role in the same words.
// accountOf is the email of the user whose account u joined, "" for an
// account of its own.
func createdUser(u billing.User, p billing.Plan, accountOf string) string {
	account := "its own account"
	if accountOf != "" {
		account = "the account of " + accountOf
	}
	return fmt.Sprintf("created user %s on plan %s, %s of %s (user %s, account %s)",
		u.Email, p.Slug, roleName(u.IsAdmin), account, u.ID, u.AccountID)
}

// existingUser returns the error of users create for the email of a user
// who exists, err: it says what that user has and which commands change
// it.
func existingUser(ctx context.Context, db bun.IDB, email string, err error) error {
	st := billing.NewStore(db)
	u, uerr := st.UserByEmail(ctx, email)
	if uerr != nil {
		return fail("users create", err)
	}
	has := []string{roleName(u.IsAdmin), "no password"}
	if p, err := st.PlanOf(ctx, u.ID); err == nil {
		has = append([]string{"plan " + p.Slug}, has...)
	}
	setPassword := "'tradekit users set-password --email " + u.Email + "'"
	todo := []string{"set its password with " + setPassword}
	if u.PasswordHash != nil {
		has[len(has)-1] = "a password"
		todo = []string{"change its password with " + setPassword}
	}
	if !u.IsAdmin {
		todo = append(todo, "make it an administrator with "+setRoleCommand(u.Email, "admin"))
	}
	return fail("users create", tradekit.Errorf(tradekit.ErrConflict, "user %s exists already (%s): %s",
		tradekit.Quote(u.Email), strings.Join(has, ", "), strings.Join(todo, "; ")))
}

// usersSetRole runs `tradekit users set-role`.
func (e *env) usersSetRole(ctx context.Context, args []string) error {
	fs, dsn := e.flags("users set-role", "--email EMAIL --role admin|member [--db DSN]",
		"Make the user of EMAIL an administrator of their account, who creates and deletes the account's\n"+
			"API keys and invites members in the dashboard, or a member, who sees them. Running servers apply it\n"+
			"at the user's next page.")
	email := fs.String("email", "", "the user's `EMAIL` (required)")
	role := fs.String("role", "", "the `ROLE`: admin (or administrator) or member (required)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *email == "" {
		return errors.New("users set-role: --email is required")
	}
	var admin bool
	switch strings.ToLower(*role) {
	case "admin", "administrator":
		admin = true
	case "member":
	default:
		return fmt.Errorf("users set-role: --role must be admin or member, got %q", *role)
	}
	db, u, err := e.openUser(ctx, *dsn, *email)
	if err != nil {
		return fail("users set-role", err)
	}
	defer db.Close()
	st := billing.NewStore(db)
	if u.IsAdmin == admin {
		fmt.Fprintf(e.stdout, "%s is %s of its account already; nothing changed\n", u.Email, article(roleName(admin)))
		return nil
	}
	if u, err = st.SetAdmin(ctx, u.ID, admin); err != nil {
		return fail("users set-role", err)
	}
	fmt.Fprintf(e.stdout, "%s is now %s of its account\n", u.Email, article(roleName(admin)))
	if admin {
		return nil
	}
	members, err := st.Members(ctx, u.AccountID)
	if err != nil {
		return fail("users set-role", err)
	}
	if len(members) == 0 || !members[0].IsAdmin { // administrators come first
		fmt.Fprintln(e.stdout, "note: the account has no administrator left: nobody can manage its keys or members in the dashboard")
	}
	return nil
}

// roleName names the role of a user who is an administrator of their
// account if admin is true, else a member, as users list shows it.
func roleName(admin bool) string {
	if admin {
		return "administrator"
	}
	return "member"
}

// article returns role with its indefinite article: "an administrator".
func article(role string) string {
	if strings.HasPrefix(role, "a") {
		return "an " + role
	}
	return "a " + role
}

// setRoleCommand returns the command line, quoted, that gives the user of
// email the role.
func setRoleCommand(email, role string) string {
	return "'tradekit users set-role --email " + email + " --role " + role + "'"
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
	db, u, err := e.openUser(ctx, *dsn, *email)
	if err == nil {
		defer db.Close()
		err = billing.NewStore(db).SetPassword(ctx, u.ID, hash)
	}
	if err != nil {
		return fail("users set-password", err)
	}
	fmt.Fprintf(e.stdout, "set the password of %s\n", u.Email)
	return nil
}

// usersList runs `tradekit users list`.
func (e *env) usersList(ctx context.Context, args []string) error {
	fs, dsn := e.flags("users list", "--account-of EMAIL [--db DSN]",
		"List the users of the account of the user of EMAIL: email, role, and whether they have a password.")
	accountOf := fs.String("account-of", "", "a member's `EMAIL` (required)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *accountOf == "" {
		return errors.New("users list: --account-of is required")
	}
	db, of, err := e.openUser(ctx, *dsn, *accountOf)
	if errors.Is(err, tradekit.ErrNotFound) {
		return fail("users list: --account-of", err)
	}
	if err != nil {
		return fail("users list", err)
	}
	defer db.Close()
	members, err := billing.NewStore(db).Members(ctx, of.AccountID)
	if err != nil {
		return fail("users list", err)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EMAIL\tNAME\tROLE\tPASSWORD\tCREATED")
	for _, m := range members {
		role, pw := roleName(m.IsAdmin), "none (invited)"
		if m.PasswordHash != nil {
			pw = "set"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Email, m.Name, role, pw, m.CreatedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

// planBySlug returns the plan of slug. When there is none, the error
// lists the plans there are.
func planBySlug(ctx context.Context, st *billing.Store, slug string) (billing.Plan, error) {
	p, err := st.Plan(ctx, slug)
	if !errors.Is(err, tradekit.ErrNotFound) {
		return p, err
	}
	plans, perr := st.Plans(ctx)
	if perr != nil || len(plans) == 0 {
		return p, err
	}
	slugs := make([]string, len(plans))
	for i, p := range plans {
		slugs[i] = p.Slug
	}
	list := slugs[0]
	if n := len(slugs); n > 1 {
		list = strings.Join(slugs[:n-1], ", ") + " or " + slugs[n-1]
	}
	return billing.Plan{}, tradekit.Errorf(tradekit.ErrNotFound, "%s: want %s", userMessage(err), list)
}
