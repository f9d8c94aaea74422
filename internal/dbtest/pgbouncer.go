package dbtest

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EnvPgBouncer names the environment variable that puts a PgBouncer in
// transaction pooling mode between the tests and PostgreSQL: "1" runs the
// pgbouncer found on PATH (or in /usr/sbin, where Debian installs it), a
// path runs that binary.
const EnvPgBouncer = "TRADEKIT_TEST_PGBOUNCER"

// EnvPgBouncerPrepared names the environment variable that sets PgBouncer's
// max_prepared_statements, which PgBouncer 1.21 and later have: 0 turns
// its tracking of protocol-level prepared statements off. Unset, a
// PgBouncer that has the setting gets [DefaultPgBouncerPrepared].
const EnvPgBouncerPrepared = "TRADEKIT_TEST_PGBOUNCER_PREPARED"

// DefaultPgBouncerPrepared is the max_prepared_statements a PgBouncer
// 1.21 or later gets when [EnvPgBouncerPrepared] is unset: PgBouncer
// 1.24's default.
const DefaultPgBouncerPrepared = 200

// PgBouncer is a throwaway PgBouncer process in a temporary directory,
// pooling connections to one PostgreSQL server in transaction mode on a
// loopback port. Its zero value is not usable; see [StartPgBouncer].
type PgBouncer struct {
	dir     string // the temporary directory: the configuration and the log
	port    int
	backend *url.URL // the server's DSN, as given to StartPgBouncer
	version [2]int   // major, minor
	proc    processUser
	cmd     *exec.Cmd
	exit    chan struct{} // closed when cmd has exited
}

// StartPgBouncer starts a PgBouncer in front of the PostgreSQL server of
// serverDSN (any database of it), with bin the pgbouncer binary ("" looks
// it up): transaction pooling, every database of the server under its own
// name. Clients are trusted without a password, as dbtest's throwaway
// server trusts them, and log in to the server as themselves: serverDSN's
// user with its password, any other role with none. Migrations and
// CREATE DATABASE should not go through it: see [DirectDSN]. The caller
// must Close it.
func StartPgBouncer(bin, serverDSN string) (*PgBouncer, error) {
	backend, err := url.Parse(serverDSN)
	if err != nil || backend.Hostname() == "" {
		return nil, fmt.Errorf("dbtest: pgbouncer: not a postgres:// DSN with a host: %q", serverDSN)
	}
	if bin == "" {
		if bin, err = findPgBouncer(); err != nil {
			return nil, err
		}
	}
	version, err := pgBouncerVersion(bin)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cmp.Or(serverParent(), tempDir), "tradekit-pgbouncer-")
	if err != nil {
		return nil, err
	}
	b := &PgBouncer{dir: dir, backend: backend, version: version}
	if err := b.start(bin); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return b, nil
}

// start writes b's configuration, starts bin on it and waits until it
// listens.
func (b *PgBouncer) start(bin string) error {
	var err error
	// PgBouncer refuses to run as root, as PostgreSQL does.
	if b.proc, err = serverUser(b.dir); err != nil {
		return err
	}
	if b.port, err = freePort(); err != nil {
		return err
	}
	ini, err := b.config()
	if err != nil {
		return err
	}
	// The DSN's user, with the password PgBouncer logs in to the server
	// with (a client's is not checked).
	password, _ := b.backend.User.Password()
	for name, text := range map[string]string{
		"pgbouncer.ini": ini,
		"userlist.txt":  fmt.Sprintf("%q %q\n", b.user(), password),
	} {
		path := filepath.Join(b.dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return err
		}
		if err := b.proc.own(path); err != nil {
			return err
		}
	}
	// PgBouncer logs to its standard error, which the log file is: it
	// has the errors of a start that fails, too.
	logFile, err := os.Create(filepath.Join(b.dir, "pgbouncer.log"))
	if err != nil {
		return err
	}
	defer logFile.Close() // the child holds its own descriptor
	b.cmd = exec.Command(bin, filepath.Join(b.dir, "pgbouncer.ini"))
	b.cmd.Dir = b.dir
	b.cmd.Stdout, b.cmd.Stderr = logFile, logFile
	b.proc.apply(b.cmd)
	if err := b.cmd.Start(); err != nil {
		return fmt.Errorf("dbtest: start pgbouncer: %w", err)
	}
	exit := make(chan struct{})
	b.exit = exit
	go func(cmd *exec.Cmd) {
		cmd.Wait()
		close(exit)
	}(b.cmd)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exit:
			return fmt.Errorf("dbtest: pgbouncer exited: %s", b.log())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			err := fmt.Errorf("dbtest: pgbouncer not listening after 10 s: %s", b.log())
			b.Close()
			return err
		}
	}
}

// config returns the text of pgbouncer.ini.
func (b *PgBouncer) config() (string, error) {
	// Every database of the server, under its own name, so that each
	// test's fresh database is reachable without a reload.
	target := fmt.Sprintf("host=%s port=%s", b.backend.Hostname(), cmp.Or(b.backend.Port(), "5432"))
	var prepared string
	if s := os.Getenv(EnvPgBouncerPrepared); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return "", fmt.Errorf("dbtest: %s must be a count, 0 or more, got %q", EnvPgBouncerPrepared, s)
		}
		if !b.HasPrepared() && n > 0 {
			return "", fmt.Errorf("dbtest: %s=%d, but pgbouncer %s has no max_prepared_statements (1.21 and later)",
				EnvPgBouncerPrepared, n, b.Version())
		}
		prepared = strconv.Itoa(n)
	} else if b.HasPrepared() {
		prepared = strconv.Itoa(DefaultPgBouncerPrepared)
	}
	var tls string
	if mode := b.backend.Query().Get("sslmode"); mode != "" && mode != "disable" {
		tls = "server_tls_sslmode = " + mode + "\n"
	}
	ini := fmt.Sprintf(`[databases]
* = %s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
; Clients are trusted, as the throwaway server trusts them. A user
; other than auth_user (a role a test creates) is looked up on the
; server, in pg_shadow, by auth_user's connection.
auth_type = trust
auth_file = %s
auth_user = %s
admin_users = %[4]s
pool_mode = transaction
; Each test database is a pool of its own, all as one user: the tests
; running at once may hold up to this many server connections in all,
; below the throwaway server's max_connections of 300, which also serves
; the direct connections (migrations, CREATE DATABASE, LISTEN).
default_pool_size = 20
max_user_connections = 200
max_client_conn = 1000
; A transaction-mode pool resets nothing between clients.
server_reset_query =
; Parameters drivers send at startup that PgBouncer does not track.
ignore_startup_parameters = extra_float_digits,search_path
; After a failed login to the server (restarting, say), try again within
; a second, not the default 15.
server_login_retry = 1
%s`, target, b.port, filepath.Join(b.dir, "userlist.txt"), b.user(), tls)
	if prepared != "" {
		ini += "max_prepared_statements = " + prepared + "\n"
	}
	return ini, nil
}

// user returns the user of the server's DSN, postgres if it names none.
func (b *PgBouncer) user() string { return cmp.Or(b.backend.User.Username(), "postgres") }

// Addr returns the loopback address b listens on, 127.0.0.1:PORT.
func (b *PgBouncer) Addr() string { return fmt.Sprintf("127.0.0.1:%d", b.port) }

// Version returns the version of b's pgbouncer, such as "1.18".
func (b *PgBouncer) Version() string { return fmt.Sprintf("%d.%d", b.version[0], b.version[1]) }

// HasPrepared reports whether b's pgbouncer has max_prepared_statements,
// the pooling of protocol-level prepared statements (1.21 and later).
func (b *PgBouncer) HasPrepared() bool {
	return b.version[0] > 1 || b.version[0] == 1 && b.version[1] >= 21
}

// DSN returns the DSN that reaches, through b, the database that direct
// (a DSN of b's server) names. Before PgBouncer 1.21, or without
// max_prepared_statements, it asks for pgx's cache_describe mode, as
// docs/production.md says to.
func (b *PgBouncer) DSN(direct string) string {
	u, err := url.Parse(direct)
	if err != nil {
		return direct
	}
	u.Host = b.Addr()
	q := u.Query()
	q.Set("sslmode", "disable") // b speaks no TLS
	if !b.HasPrepared() {
		q.Set("default_query_exec_mode", "cache_describe")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Direct returns the DSN of b's server for the database that dsn, a DSN
// through b, names; any other DSN comes back as it is.
func (b *PgBouncer) Direct(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Host != b.Addr() {
		return dsn
	}
	d := *b.backend
	d.Path = u.Path
	return d.String()
}

// Close stops b (SIGTERM, then SIGKILL after 5 s) and removes its files.
func (b *PgBouncer) Close() {
	if b.cmd != nil && b.cmd.Process != nil {
		b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.exit:
		case <-time.After(5 * time.Second):
			b.cmd.Process.Kill()
			<-b.exit
		}
	}
	os.RemoveAll(b.dir)
}

// log returns the end of b's log.
func (b *PgBouncer) log() string {
	data, err := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// findPgBouncer returns the path of the pgbouncer binary.
func findPgBouncer() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer", nil
	}
	return "", errors.New("dbtest: pgbouncer not found (Debian: apt install pgbouncer)")
}

var pgBouncerVersionRE = regexp.MustCompile(`PgBouncer (\d+)\.(\d+)`)

// pgBouncerVersion returns the major and minor version of the pgbouncer
// binary bin.
func pgBouncerVersion(bin string) ([2]int, error) {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return [2]int{}, fmt.Errorf("dbtest: %s --version: %v: %s", bin, err, out)
	}
	m := pgBouncerVersionRE.FindSubmatch(out)
	if m == nil {
		return [2]int{}, fmt.Errorf("dbtest: %s --version: no version in %q", bin, out)
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	return [2]int{major, minor}, nil
}
