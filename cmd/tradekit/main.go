package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/database"
)

// usage is the help of tradekit; {serve flags} stands for the flags of
// serve, which [env.usage] reads from serve's own flag set.
const usage = `usage: tradekit <command> [flags]

commands:
  serve        serve the API ({serve flags})
  migrate      apply pending database migrations (--db)
  keys create  create an API key, and its user if new (--email, --name, --plan, --admin, --db)
  keys list    list a user's API keys (--email, --db)
  keys delete  revoke an API key (--id, --db)
  users create        create a dashboard user; the password is read from stdin (--email, --name, --plan, --admin, --account-of, --db)
  users set-password  set a user's dashboard password, read from stdin (--email, --db)
  users set-role      make a user an administrator of their account, or a member (--email, --role, --db)
  users list          list the users of an account (--account-of, --db)
  paper apps create   register a third-party app with the paper broker (--name, --redirect-uri, --db)
  paper apps list     list the apps registered with the paper broker (--db)
  paper apps delete   unregister an app and revoke its tokens (--id, --db)
  seed         load the deterministic demo data set; prices are SYNTHETIC (--db)
  import prices [--symbol SYM] --file PATH [--name NAME] [--workers N] [--type stock] [--currency USD] [--exchange SYMBOL] [--db DSN]
               import daily OHLCV from CSV, creating assets when unknown; re-imports update. Without --symbol:
               a CSV with a symbol column, a directory of SYMBOL.csv, .gz of either, or Polygon flat files
  import splits|dividends --file PATH [--db DSN]
               import corporate actions: symbol,date,ratio or symbol,exDate,amount
  import industries|assets|indexes|constituents|profiles|fundamentals --file PATH [--format csv|json] [--db DSN]
               import reference data from CSV or JSON (see marketdata/IMPORT.md)
  profiles build [--all] [--shard I/N] [--workers N] [--unadjusted] [--db DSN]
               build the analytics profiles of the assets whose prices changed (--all: every asset)
  db copy --from DSN --to DSN
               copy a whole database into an empty one, SQLite to PostgreSQL or back, checked by checksums
  feed run --provider massive|alpaca --from DATE [--to DATE] [--rate N/min] [--db DSN]
               fetch daily bars, new assets, splits and dividends from a data provider (see docs/feeds.md)
  feed status [--provider NAME] [--limit N] [--db DSN]
               the feeds' last runs, failed days and next run
  version      print the module version and VCS revision of this binary

Every command also takes --verbose: on an error, print the whole chain of its causes.
'tradekit --version' is 'tradekit version'.
Run 'tradekit <command> -h' (or 'tradekit help <command>') for a command's flags.`

// usageWidth is the width the list of serve's flags is wrapped at in
// [usage].
const usageWidth = 100

// usage returns the help of tradekit: [usage] with the flags of serve as
// serve itself defines them, so that the two cannot disagree. --verbose,
// which every command takes, is left to the help's last lines.
func (e *env) usage() string {
	var names []string
	for _, f := range e.flagsOf("serve") {
		if f.Name != "verbose" {
			names = append(names, "--"+f.Name)
		}
	}
	names = append(names, "'tradekit serve -h' says what each does")
	const indent = "               " // under the commands' descriptions
	var b strings.Builder
	line := len(indent) + len("serve the API (")
	for i, n := range names {
		if i > 0 {
			sep := ","
			if i == len(names)-1 {
				sep = ";"
			}
			b.WriteString(sep)
			if line+2+len(n) > usageWidth {
				b.WriteString("\n" + indent)
				line = len(indent)
			} else {
				b.WriteString(" ")
				line++
			}
			line++
		}
		b.WriteString(n)
		line += len(n)
	}
	return strings.Replace(usage, "{serve flags}", b.String(), 1)
}

// flagsOf returns the flags of the command args names, such as "serve" or
// "keys", "create", as its help lists them: it asks the command for its
// help, and prints that nowhere.
func (e *env) flagsOf(args ...string) []*flag.Flag {
	probe := &env{getenv: e.getenv, stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	probe.dispatch(context.Background(), append(slices.Clip(args), "-h"))
	var fl []*flag.Flag
	if probe.fs != nil {
		probe.fs.VisitAll(func(f *flag.Flag) { fl = append(fl, f) })
	}
	return fl
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	status := runMain(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(status)
}

// runMain runs the command line args as [run] does and returns the exit
// status: 0 on success; else 1, after writing the error to stderr on one
// line, "tradekit: " and the error's message for users (see [cmdError]),
// or with --verbose its whole chain.
func runMain(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	err := e.run(ctx, args)
	if err == nil {
		return 0
	}
	msg := plain(err)
	if e.verbose() {
		msg = chain(err)
	}
	fmt.Fprintln(stderr, "tradekit: "+oneLine(msg))
	return 1
}

// run runs the command line args; getenv reads the environment. Help
// asked for with -h, --help or help, at any level, is printed to stdout
// and is no error. An error's message starts with the command's name.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return (&env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}).run(ctx, args)
}

// run runs the command line args, as the function run does.
func (e *env) run(ctx context.Context, args []string) error {
	err := e.dispatch(ctx, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if e.fs != nil {
		err = withCommand(strings.TrimPrefix(e.fs.Name(), "tradekit "), err)
	}
	return err
}

// verbose reports whether the command was given --verbose.
func (e *env) verbose() bool {
	if e.fs == nil {
		return false
	}
	f := e.fs.Lookup("verbose")
	return f != nil && f.Value.String() == "true"
}

// dispatch runs the command args names.
func (e *env) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, e.usage())
		return errors.New("no command given")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return e.serve(ctx, rest)
	case "migrate":
		return e.migrate(ctx, rest)
	case "keys":
		return e.keys(ctx, rest)
	case "users":
		return e.users(ctx, rest)
	case "seed":
		return e.seed(ctx, rest)
	case "import":
		return e.importCmd(ctx, rest)
	case "profiles":
		return e.profilesCmd(ctx, rest)
	case "paper":
		return e.paperCmd(ctx, rest)
	case "db":
		return e.dbCmd(ctx, rest)
	case "feed":
		return e.feedCmd(ctx, rest)
	case "help":
		if len(rest) > 0 && !isHelp(rest[0]) {
			// tradekit help keys create: the help of that command.
			return e.dispatch(ctx, append(slices.Clip(rest), "-h"))
		}
		return e.help(e.usage())
	case "-h", "-help", "--help":
		return e.help(e.usage())
	case "version", "-version", "--version":
		return e.version(rest)
	default:
		return fmt.Errorf("unknown command %s; run 'tradekit help' for the list of commands", tradekit.Quote(cmd))
	}
}

// isHelp reports whether arg asks for help where a subcommand is expected.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// subcommand is one subcommand of a command group: its name and what
// runs it with the arguments after the name.
type subcommand struct {
	name string
	run  func(ctx context.Context, args []string) error
}

// runSubcommand runs the subcommand of the group (say "keys", or "paper apps")
// that args[0] names, printing usage for a help argument. Without a
// subcommand, or with an unknown one, it returns an error listing subs;
// see names the command whose -h explains them.
func (e *env) runSubcommand(ctx context.Context, group, see, usage string, args []string, subs ...subcommand) error {
	names := make([]string, len(subs))
	for i, sub := range subs {
		names[i] = sub.name
	}
	want := names[len(names)-1]
	if len(names) > 1 {
		want = strings.Join(names[:len(names)-1], ", ") + " or " + want
	}
	if len(args) == 0 {
		return fmt.Errorf("%s: give a subcommand: %s (see 'tradekit %s -h')", group, want, see)
	}
	if isHelp(args[0]) {
		return e.help(usage)
	}
	for _, sub := range subs {
		if sub.name == args[0] {
			return sub.run(ctx, args[1:])
		}
	}
	return fmt.Errorf("%s: unknown subcommand %q: want %s", group, args[0], want)
}

// help prints text, the usage of a command, to stdout and returns
// [flag.ErrHelp], which run reports as success.
func (e *env) help(text string) error {
	fmt.Fprintln(e.stdout, text)
	return flag.ErrHelp
}

// env is what every command gets from the process.
type env struct {
	getenv         func(string) string
	stdin          io.Reader // passwords are read from it, never from flags
	stdout, stderr io.Writer
	// fs is the flag set of the command that runs, once it has made it
	// (see [env.flags]): it names the command and holds --verbose.
	fs *flagSet
}

// flagSet is the flags of one command, with what its help prints.
type flagSet struct {
	*flag.FlagSet
	// synopsis is the command line after the command's name, e.g.
	// "--email EMAIL [--db DSN]"; about says what the command does.
	synopsis, about string
	// hidden names the flags that help does not list: tools for the
	// project's developers, such as --cpuprofile.
	hidden map[string]bool
}

// flags returns a flag set for the command name with the --db and
// --verbose flags, and makes it the command's (see [env.fs]). synopsis
// and about are printed by its help (see [env.parse]).
func (e *env) flags(name, synopsis, about string) (*flagSet, *string) {
	fs := &flagSet{FlagSet: flag.NewFlagSet("tradekit "+name, flag.ContinueOnError), synopsis: synopsis, about: about}
	e.fs = fs
	// parse reports errors on one line and prints help to stdout itself.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	def := e.getenv("TRADEKIT_DB")
	if def == "" {
		def = database.DefaultDSN
	}
	dsn := fs.String("db", def, "the database: a postgres:// `DSN` or a SQLite file path (env TRADEKIT_DB)")
	fs.Bool("verbose", false, "on an error, print the whole chain of its causes, not only its message")
	return fs, dsn
}

// parse parses args into fs and refuses stray arguments. Asked for help
// (-h or --help), it prints the command's usage and flags to stdout and
// returns [flag.ErrHelp].
func (e *env) parse(fs *flagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		e.printHelp(fs)
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: %w (see '%s -h')", strings.TrimPrefix(fs.Name(), "tradekit "), err, fs.Name())
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", strings.TrimPrefix(fs.Name(), "tradekit "), fs.Arg(0))
	}
	return nil
}

// printHelp prints the usage of the command of fs and its flags to stdout.
func (e *env) printHelp(fs *flagSet) {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s %s\n\n%s\n\nflags:\n", fs.Name(), fs.synopsis, fs.about)
	fs.VisitAll(func(f *flag.Flag) {
		if fs.hidden[f.Name] {
			return
		}
		name, text := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(&b, " %s", strings.ToUpper(name))
		}
		fmt.Fprintf(&b, "\n        %s", strings.ReplaceAll(text, "\n", "\n        "))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteByte('\n')
	})
	io.WriteString(e.stdout, b.String())
}

// open opens and migrates the database for a command's work, with no
// socket timeout (see [database.Options]): seeding, imports and profile
// builds run statements that take many seconds on a loaded machine.
func (e *env) open(ctx context.Context, dsn string) (*bun.DB, error) {
	return openWith(ctx, dsn, database.Options{})
}

// openUser opens and migrates the database of dsn and returns it with the
// user of email; the caller closes it. An error names no command: the
// caller prefixes its own.
func (e *env) openUser(ctx context.Context, dsn, email string) (*bun.DB, billing.User, error) {
	db, err := e.open(ctx, dsn)
	if err != nil {
		return nil, billing.User{}, err
	}
	u, err := billing.NewStore(db).UserByEmail(ctx, email)
	if err != nil {
		db.Close()
		return nil, billing.User{}, err
	}
	return db, u, nil
}

// openWith opens the database with opts and migrates it.
func openWith(ctx context.Context, dsn string, opts database.Options) (*bun.DB, error) {
	db, err := database.Open(ctx, dsn, opts)
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
	fs, dsn := e.flags("migrate", "[--db DSN] [--verbose]", "Apply the pending database migrations, and nothing else. It prints one line: how many\n"+
		"migrations it applied and the schema's version; --verbose lists them.")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	db, err := database.Open(ctx, *dsn, database.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := database.Migrate(ctx, db)
	if err != nil {
		return err
	}
	if e.verbose() {
		for _, name := range applied {
			fmt.Fprintln(e.stdout, "applied", name)
		}
	}
	version, err := database.Version(ctx, db)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "database is up to date at version %s (%s applied now)\n", version, plural(len(applied), "migration", "migrations"))
	return nil
}
