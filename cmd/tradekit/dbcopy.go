package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbcopy"
	"github.com/tradekit/tradekit/internal/seal"
)

// dbUsage is the help of `tradekit db`.
const dbUsage = `usage: tradekit db copy --from DSN --to DSN

subcommands:
  copy  copy a whole database into an empty one, SQLite to PostgreSQL or back (--from, --to)

The target is migrated first and must be empty; the copy is written in one
transaction and checked (row counts and checksums) before it commits.

Run 'tradekit db copy -h' for its flags.`

// dbCmd runs `tradekit db`.
func (e *env) dbCmd(ctx context.Context, args []string) error {
	return e.runSubcommand(ctx, "db", "db", dbUsage, args, subcommand{"copy", e.dbCopy})
}

// dbCopyAbout is what `tradekit db copy -h` says the command does.
const dbCopyAbout = `Copy every table of the database --from into the empty database --to: SQLite to
PostgreSQL, or back. The target is migrated first; the source must have this
version's migrations applied, and is only read. The copy is written in one
transaction and checked before it commits: per table, the row count and a checksum
of the rows read back from the target must equal the source's. On any error, or if
the copy is killed, the target stays empty.

Sealed secrets (broker tokens, webhook secrets) are copied as they are, and need
the key that sealed them: TRADEKIT_SECRET_KEY when set, else, for a SQLite source,
the file <path>.secret beside it. A key that does not open them is refused before
anything is written. A SQLite target gets the key in <path>.secret; for a
PostgreSQL target the command prints what to set.`

// dbCopy runs `tradekit db copy`.
func (e *env) dbCopy(ctx context.Context, args []string) error {
	fs, _ := e.flags("db copy", "--from DSN --to DSN", dbCopyAbout)
	fs.hidden = map[string]bool{"db": true, "cpuprofile": true}
	from := fs.String("from", "", "the source database: a postgres:// `DSN` or a SQLite file path (required)")
	to := fs.String("to", "", "the target database, created or migrated, and empty: a postgres:// `DSN` or a SQLite file path (required)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the copy to `FILE` (for go tool pprof)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return fmt.Errorf("db copy: --cpuprofile: %w", err)
		}
		defer stop()
	}
	if isSet(fs.FlagSet, "db") {
		return errors.New("db copy: --db is not used: name the databases with --from and --to")
	}
	switch {
	case *from == "":
		return errors.New("db copy: --from is required")
	case *to == "":
		return errors.New("db copy: --to is required")
	case strings.TrimPrefix(*from, "sqlite:") == strings.TrimPrefix(*to, "sqlite:"):
		return errors.New("db copy: --from and --to name the same database")
	}
	if !database.IsPostgres(*from) {
		// Opening a SQLite path that is not there would create it.
		if _, err := os.Stat(strings.TrimPrefix(*from, "sqlite:")); err != nil {
			return fail("db copy: --from", err)
		}
	}
	start := time.Now()
	src, err := database.Open(ctx, *from, database.Options{})
	if err != nil {
		return fail("db copy: --from", err)
	}
	defer src.Close()
	if err := dbcopy.CheckMigrations(ctx, src, "source"); err != nil {
		return fail("db copy: --from", err)
	}
	keys, err := e.copyKeys(ctx, src, *from, *to)
	if err != nil {
		return fail("db copy", err)
	}
	dst, err := openWith(ctx, *to, database.Options{})
	if err != nil {
		return fail("db copy: --to", err)
	}
	defer dst.Close()
	wroteKey, err := keys.writeTargetFile()
	if err != nil {
		return fail("db copy", err)
	}
	bar := newProgressBar(e.stderr, start)
	opts := dbcopy.Options{}
	if bar != nil {
		opts.Progress = func(p dbcopy.Progress) {
			if bar.due() && p.Total > 0 {
				bar.draw(float64(p.Rows)/float64(p.Total), p.Rows, fmt.Sprintf("%d/%d rows  %s", p.Rows, p.Total, p.Table))
			}
		}
	}
	res, err := dbcopy.Copy(ctx, src, dst, opts)
	bar.clear()
	if err != nil {
		if wroteKey {
			os.Remove(keys.targetFile)
		}
		return fail("db copy", err)
	}
	fmt.Fprintf(e.stdout, "copied %s, %s, from %s to %s in %.1fs; row counts and checksums match\n",
		plural(len(res.Tables), "table", "tables"), plural(int(res.Rows), "row", "rows"),
		database.Redact(*from), database.Redact(*to), time.Since(start).Seconds())
	keys.printNote(e)
	return nil
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// copyKeys is what a copy does about the key of sealed secrets.
type copyKeys struct {
	sealed     bool   // the source holds sealed values
	key        []byte // the key that opens them
	keyFile    string // the source's <path>.secret the key came from; "" when from the environment
	targetFile string // the SQLite target's <path>.secret, to write the key into; "" for PostgreSQL
	targetPG   bool
}

// sealedColumns are the columns that hold sealed values, as their owning
// packages declare them.
func sealedColumns() []seal.Column {
	return append(connect.SealedColumns(), alerts.SealedColumns()...)
}

// copyKeys finds out whether the source of dsn from holds sealed values
// and, if it does, which key opens them: TRADEKIT_SECRET_KEY, or the
// SQLite source's key file. A key that does not open them, an
// environment key other than the source's file, or no key at all, is an
// error before anything is written.
func (e *env) copyKeys(ctx context.Context, src *bun.DB, from, to string) (*copyKeys, error) {
	k := &copyKeys{targetPG: database.IsPostgres(to)}
	if !k.targetPG {
		k.targetFile = strings.TrimPrefix(to, "sqlite:") + ".secret"
	}
	envKey, err := e.envSecretKey()
	if err != nil {
		return nil, err
	}
	var fileKey []byte
	srcFile := ""
	if !database.IsPostgres(from) {
		srcFile = strings.TrimPrefix(from, "sqlite:") + ".secret"
		if fileKey, err = readKeyFile(srcFile); err != nil {
			return nil, err
		}
	}
	if envKey != nil && fileKey != nil && !bytes.Equal(envKey, fileKey) {
		return nil, fmt.Errorf("TRADEKIT_SECRET_KEY differs from the key of the source in %s: unset it, or give the source's key", srcFile)
	}
	sample, found, err := dbcopy.FindSealed(ctx, src, sealedColumns())
	if err != nil || !found {
		return k, err
	}
	k.sealed = true
	switch {
	case envKey != nil:
		k.key = envKey
	case fileKey != nil:
		k.key, k.keyFile = fileKey, srcFile
	case srcFile != "":
		return nil, fmt.Errorf("the source holds sealed secrets (%s.%s) but no key: set TRADEKIT_SECRET_KEY, or restore %s",
			sample.Column.Table, sample.Column.Column, srcFile)
	default:
		return nil, fmt.Errorf("the source holds sealed secrets (%s.%s): set TRADEKIT_SECRET_KEY to the key its servers use",
			sample.Column.Table, sample.Column.Column)
	}
	if !sample.Opens(k.key) {
		from := "TRADEKIT_SECRET_KEY"
		if k.keyFile != "" {
			from = "the key in " + k.keyFile
		}
		return nil, fmt.Errorf("%s does not open the sealed secrets of the source (%s.%s): give the key that sealed them",
			from, sample.Column.Table, sample.Column.Column)
	}
	if k.targetFile != "" {
		existing, err := readKeyFile(k.targetFile)
		if err != nil {
			return nil, err
		}
		if existing != nil && !bytes.Equal(existing, k.key) {
			return nil, fmt.Errorf("%s holds another key than the one that opens the source's sealed secrets: remove it, or copy to a new path", k.targetFile)
		}
	}
	return k, nil
}

// envSecretKey returns the key in TRADEKIT_SECRET_KEY, nil when unset.
func (e *env) envSecretKey() ([]byte, error) {
	v := strings.TrimSpace(e.getenv("TRADEKIT_SECRET_KEY"))
	if v == "" {
		return nil, nil
	}
	key, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(key) != secretKeySize {
		return nil, fmt.Errorf("TRADEKIT_SECRET_KEY must be the base64 of %d bytes", secretKeySize)
	}
	return key, nil
}

// readKeyFile returns the key in the file path, nil when there is no
// such file.
func readKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the secret key: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != secretKeySize {
		return nil, fmt.Errorf("%s does not hold the base64 of %d bytes", path, secretKeySize)
	}
	return key, nil
}

// writeTargetFile writes the key into the SQLite target's key file
// (0600), when the source holds sealed values and the file is not there
// yet, and reports whether it wrote it.
func (k *copyKeys) writeTargetFile() (bool, error) {
	if !k.sealed || k.targetFile == "" {
		return false, nil
	}
	f, err := os.OpenFile(k.targetFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil // holding this key: copyKeys checked
	}
	if err != nil {
		return false, fmt.Errorf("write the secret key: %w", err)
	}
	// 0600 whatever the umask, which may have taken even the owner's bits.
	err = f.Chmod(0o600)
	if err == nil {
		_, err = fmt.Fprintln(f, base64.StdEncoding.EncodeToString(k.key))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(k.targetFile)
		return false, fmt.Errorf("write the secret key: %w", err)
	}
	return true, nil
}

// printNote says which key opens the sealed secrets copied, and where
// the target's servers find it.
func (k *copyKeys) printNote(e *env) {
	switch {
	case !k.sealed:
		return
	case k.targetFile != "":
		fmt.Fprintf(e.stdout, "sealed secrets copied as they are; their key is in %s (keep it with the database)\n", k.targetFile)
	case k.keyFile != "":
		fmt.Fprintf(e.stdout, "sealed secrets copied as they are; servers on the target need their key, which is in %s:\n", k.keyFile)
		fmt.Fprintf(e.stdout, "  export TRADEKIT_SECRET_KEY=$(cat %s)\n", shellQuote(k.keyFile))
	default:
		fmt.Fprintln(e.stdout, "sealed secrets copied as they are; servers on the target need the TRADEKIT_SECRET_KEY this copy was given")
	}
}

// shellQuote returns s quoted for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
