package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// The paper broker's settings on both instances: enough play money for
// the whole load, and a slippage and a commission, so that the replay of
// invariant 3 has more to add up than quantities times closes.
const (
	paperCash       = "1000000"
	paperSlippage   = "5"    // basis points
	paperCommission = "0.25" // USD per filled order
)

// cluster is what the run starts: the throwaway PostgreSQL server, with
// -pgbouncer a PgBouncer in front of it, and the two `tradekit serve`
// instances on it.
type cluster struct {
	bin      string // the tradekit binary
	work     string // temporary directory: the instances' logs
	pg       *dbtest.Server
	bouncer  *dbtest.PgBouncer // with -pgbouncer
	dsn      string            // the run's database, on the server itself: the CLI's and the checks'
	serveDSN string            // the instances' --db: dsn, or with -pgbouncer through PgBouncer
	listen   string            // the instances' --db-listen, if any: dsn with -pgbouncer, when serve has it
	secret   string            // TRADEKIT_SECRET_KEY, shared by the instances
	inst     [2]*instance
	keep     bool // keep the work directory with the logs
}

// instance is one `tradekit serve` process, restarted on the same
// address after it is killed.
type instance struct {
	name string // "A" or "B"
	addr string // 127.0.0.1:PORT
	log  string // path of its log, appended to across restarts
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has exited
	// down is set while the run knows the instance is dead, so that the
	// load sends its requests to the other one.
	down atomic.Bool
}

// url returns the instance's base URL.
func (in *instance) url() string { return "http://" + in.addr }

// startCluster starts PostgreSQL, prepares the database with the CLI and
// starts both instances. The cluster it returns, even with an error,
// must be closed.
func startCluster(ctx context.Context, cfg config, say func(string, ...any)) (*cluster, error) {
	work, err := os.MkdirTemp("", "faultrun-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: cfg.bin, work: work, keep: cfg.keep}
	key := make([]byte, 32)
	rand.Read(key)
	c.secret = base64.StdEncoding.EncodeToString(key)

	if c.pg, err = dbtest.StartServer(); err != nil {
		return c, err
	}
	if c.dsn, err = createDatabase(ctx, c.pg.DSN("postgres"), "tradekit"); err != nil {
		return c, err
	}
	say("PostgreSQL up: %s", c.dsn)
	c.serveDSN = c.dsn
	if cfg.pgbouncer {
		if c.bouncer, err = dbtest.StartPgBouncer("", c.dsn); err != nil {
			return c, err
		}
		c.serveDSN = c.bouncer.DSN(c.dsn)
		say("PgBouncer %s up, transaction pooling: the instances' --db is %s", c.bouncer.Version(), c.serveDSN)
		if c.hasDBListen(ctx) {
			c.listen = c.dsn
			say("their --db-listen is the server's own %s", c.listen)
		} else {
			say("serve has no --db-listen: the instances LISTEN through PgBouncer")
		}
	}
	for _, args := range [][]string{{"migrate"}, {"seed"}, {"profiles", "build"}} {
		if _, err := c.tradekit(ctx, args...); err != nil {
			return c, err
		}
	}
	say("database migrated, seeded, profiles built")

	for i, name := range []string{"A", "B"} {
		port, err := freePort()
		if err != nil {
			return c, err
		}
		c.inst[i] = &instance{name: name, addr: fmt.Sprintf("127.0.0.1:%d", port), log: filepath.Join(work, "serve-"+name+".log")}
		if err := c.start(ctx, c.inst[i]); err != nil {
			return c, err
		}
		say("instance %s serving at %s (pid %d)", name, c.inst[i].url(), c.inst[i].cmd.Process.Pid)
	}
	return c, nil
}

// createDatabase creates the named database on the server of adminDSN
// and returns its DSN.
func createDatabase(ctx context.Context, adminDSN, name string) (string, error) {
	admin, err := database.Open(ctx, adminDSN, database.Options{})
	if err != nil {
		return "", err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	return strings.Replace(adminDSN, "/postgres?", "/"+name+"?", 1), nil
}

// openDB opens the run's database for the checks.
func (c *cluster) openDB(ctx context.Context) (*bun.DB, error) {
	return database.Open(ctx, c.dsn, database.Options{})
}

// tradekit runs a CLI subcommand on the run's database and returns its
// standard output.
func (c *cluster) tradekit(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.bin, append(args, "--db", c.dsn)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tradekit %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// start starts the instance's serve process and waits until it answers
// /readyz.
func (c *cluster) start(ctx context.Context, in *instance) error {
	logFile, err := os.OpenFile(in.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child holds its own descriptor
	args := []string{"serve", "--db", c.serveDSN, "--addr", in.addr, "--public-url", in.url(), "--no-seed",
		"--paper-cash", paperCash, "--paper-slippage-bps", paperSlippage, "--paper-commission", paperCommission}
	if c.listen != "" {
		args = append(args, "--db-listen", c.listen)
	}
	in.cmd = exec.Command(c.bin, args...)
	in.cmd.Env = append(os.Environ(), "TRADEKIT_SECRET_KEY="+c.secret)
	in.cmd.Stdout, in.cmd.Stderr = logFile, logFile
	if err := in.cmd.Start(); err != nil {
		return fmt.Errorf("start instance %s: %w", in.name, err)
	}
	exit := make(chan struct{})
	in.exit = exit
	go func(cmd *exec.Cmd) {
		cmd.Wait()
		close(exit)
	}(in.cmd)
	if _, err := waitReady(ctx, in, 30*time.Second); err != nil {
		return err
	}
	in.down.Store(false)
	return nil
}

// hasDBListen reports whether the binary's serve has --db-listen: the
// direct connection it LISTENs on when its --db is a transaction pooler.
func (c *cluster) hasDBListen(ctx context.Context) bool {
	out, err := exec.CommandContext(ctx, c.bin, "serve", "-h").CombinedOutput()
	return err == nil && bytes.Contains(out, []byte("-db-listen"))
}

// kill kills the instance with SIGKILL, after marking it down, and waits
// for it to be gone.
func (c *cluster) kill(in *instance) {
	in.down.Store(true)
	in.cmd.Process.Signal(syscall.SIGKILL)
	<-in.exit
}

// probe is the HTTP client of the readiness probes. Its requests are the
// run's measuring instrument and are not counted with the API requests.
var probe = &http.Client{Timeout: 2 * time.Second}

// ready reports whether the instance answers GET /readyz with 200.
func ready(ctx context.Context, in *instance) bool {
	req, err := http.NewRequestWithContext(ctx, "GET", in.url()+"/readyz", nil)
	if err != nil {
		return false
	}
	res, err := probe.Do(req)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// waitReady polls the instance's /readyz every 50 ms until it answers
// 200, and returns when it did. It fails after limit, when ctx is done,
// or when the instance's process exits.
func waitReady(ctx context.Context, in *instance, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for {
		if ready(ctx, in) {
			return time.Now(), nil
		}
		select {
		case <-in.exit:
			return time.Time{}, fmt.Errorf("instance %s exited; its log:\n%s", in.name, tail(in.log, 20))
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("instance %s not ready after %s; its log:\n%s", in.name, limit, tail(in.log, 20))
		}
	}
}

// close stops the instances (SIGTERM, then SIGKILL after 10 s), stops
// PgBouncer and PostgreSQL and removes every file the run made, except the instances'
// logs with -keep.
func (c *cluster) close() {
	for _, in := range c.inst {
		if in == nil || in.cmd == nil {
			continue
		}
		select {
		case <-in.exit:
			continue
		default:
		}
		in.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-in.exit:
		case <-time.After(10 * time.Second):
			in.cmd.Process.Signal(syscall.SIGKILL)
			<-in.exit
		}
	}
	if c.bouncer != nil {
		c.bouncer.Close()
	}
	if c.pg != nil {
		c.pg.Close()
	}
	if c.keep {
		fmt.Printf("the instances' logs are kept in %s\n", c.work)
		return
	}
	os.RemoveAll(c.work)
}

// dumpLogs prints the warnings and errors of both instances' logs (but
// the demo data set's), for a run that failed.
func (c *cluster) dumpLogs() {
	for _, in := range c.inst {
		if in == nil {
			continue
		}
		b, err := os.ReadFile(in.log)
		if err != nil {
			continue
		}
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if (strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR")) && !strings.Contains(l, "demo data set") {
				lines = append(lines, l)
			}
		}
		if len(lines) > 40 {
			lines = append(lines[:20], append([]string{fmt.Sprintf("… %d more …", len(lines)-40)}, lines[len(lines)-20:]...)...)
		}
		fmt.Printf("== instance %s: %d warnings and errors\n%s\n", in.name, len(lines), strings.Join(lines, "\n"))
	}
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// freePort returns a TCP port free on the loopback interface.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
