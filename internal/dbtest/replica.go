package dbtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/database"
)

// Replicated is a throwaway PostgreSQL primary with one streaming
// replica (a hot standby): the primary runs with wal_level=replica, and
// the standby is a pg_basebackup -R of it, replaying its WAL as it comes.
// See [StartReplicated].
type Replicated struct {
	Primary, Standby *Server
	name             string // the migrated database, on both
}

// replicaOpts are the primary's and the standby's settings beyond
// Start's: WAL fit for a standby, full pages for the base backup, commits
// flushed before they return (so pg_current_wal_lsn covers them), and
// standby feedback that stops replay from cancelling the tests' reads.
const replicaOpts = "-c wal_level=replica -c max_wal_senders=4 -c full_page_writes=on " +
	"-c synchronous_commit=on -c hot_standby=on -c hot_standby_feedback=on -c wal_receiver_status_interval=1s"

// StartReplicated starts a primary and a standby of it, each on a free
// loopback port in a temporary directory, creates a migrated database on
// the primary and waits until the standby has replayed it. Both servers
// are stopped and removed when the test ends. Without PostgreSQL's
// binaries the test is skipped, or fails under CI=true (see
// [Unavailable]); when TRADEKIT_TEST_POSTGRES names a server and there
// are no binaries, it is skipped. TRADEKIT_TEST_POSTGRES's server is not
// used: a replica needs a primary of the test's own.
func StartReplicated(tb testing.TB) *Replicated {
	tb.Helper()
	bin, err := findBinaries()
	if err != nil && os.Getenv(EnvPostgres) != "" {
		// The run brought a server of its own and no binaries: a replica
		// cannot be made of it.
		tb.Skipf("dbtest: a streaming replica needs PostgreSQL's binaries, and %s names a server without them: %v", EnvPostgres, err)
	}
	if err != nil {
		Unavailable(tb, err)
	}
	if _, err := os.Stat(filepath.Join(bin, "pg_basebackup")); err != nil {
		Unavailable(tb, fmt.Errorf("dbtest: pg_basebackup not found beside pg_ctl in %s", bin))
	}
	primary, err := startServer(bin, replicaOpts)
	if err != nil {
		tb.Fatalf("dbtest: the primary: %v", err)
	}
	tb.Cleanup(primary.Close)
	standby, err := newServer(bin, replicaOpts)
	if err != nil {
		tb.Fatalf("dbtest: the standby: %v", err)
	}
	tb.Cleanup(standby.Close)
	if err := standby.run("pg_basebackup", "-D", standby.data(), "-h", "127.0.0.1",
		"-p", fmt.Sprint(primary.port), "-U", "postgres", "-X", "stream", "-R", "--no-sync", "-c", "fast"); err != nil {
		tb.Fatalf("dbtest: %v", err)
	}
	if err := standby.Start(); err != nil {
		tb.Fatalf("dbtest: the standby: %v", err)
	}
	r := &Replicated{Primary: primary, Standby: standby, name: "tk_replicated"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := database.Open(ctx, primary.DSN("postgres"), database.Options{})
	if err != nil {
		tb.Fatalf("dbtest: %v", err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+r.name); err != nil {
		tb.Fatalf("dbtest: %v", err)
	}
	db := MustOpen(tb, r.PrimaryDSN())
	if err := r.WaitReplayed(ctx, db); err != nil {
		tb.Fatalf("dbtest: %v", err)
	}
	return r
}

// PrimaryDSN returns the DSN of the migrated database on the primary.
func (r *Replicated) PrimaryDSN() string { return r.Primary.DSN(r.name) }

// StandbyDSN returns the DSN of the same database on the standby.
func (r *Replicated) StandbyDSN() string { return r.Standby.DSN(r.name) }

// WaitReplayed waits until the standby has replayed everything the
// primary, reached through primary, had written when WaitReplayed was
// called.
func (r *Replicated) WaitReplayed(ctx context.Context, primary bun.IDB) error {
	var target string
	if err := primary.QueryRowContext(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&target); err != nil {
		return fmt.Errorf("dbtest: the primary's WAL position: %w", err)
	}
	standby, err := database.Open(ctx, r.Standby.DSN("postgres"), database.Options{})
	if err != nil {
		return err
	}
	defer standby.Close()
	for {
		var done bool
		err := standby.QueryRowContext(ctx, "SELECT pg_last_wal_replay_lsn() >= ?::pg_lsn", target).Scan(&done)
		if err == nil && done {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("dbtest: the standby did not replay up to %s", target), err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// PauseReplay pauses the standby's replay of the primary's WAL
// (pg_wal_replay_pause): it stays reachable and answers with what it
// has, falling behind as the primary writes.
func (r *Replicated) PauseReplay(ctx context.Context) error {
	return r.onStandby(ctx, "SELECT pg_wal_replay_pause()")
}

// ResumeReplay resumes the standby's replay (pg_wal_replay_resume).
func (r *Replicated) ResumeReplay(ctx context.Context) error {
	return r.onStandby(ctx, "SELECT pg_wal_replay_resume()")
}

func (r *Replicated) onStandby(ctx context.Context, query string) error {
	db, err := database.Open(ctx, r.Standby.DSN("postgres"), database.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, query)
	return err
}

// Kill stops the server at once, as a crash would (an immediate
// shutdown: connections are cut and no checkpoint is written). [Server.Start]
// starts it again, recovering from its WAL.
func (s *Server) Kill() error {
	return s.run("pg_ctl", "stop", "-w", "-m", "immediate", "-D", s.data())
}

// startServer initialises and starts a throwaway server from the
// binaries in bin with the further options opts, as [StartServer] does.
func startServer(bin, opts string) (*Server, error) {
	s, err := newServer(bin, opts)
	if err != nil {
		return nil, err
	}
	if err := s.run("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--no-locale", "--no-sync"); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	if err := s.Start(); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	return s, nil
}

// newServer returns a server with a directory and a port but no data
// yet.
func newServer(bin, opts string) (*Server, error) {
	dir, err := os.MkdirTemp(cmp.Or(serverParent(), tempDir), "tradekit-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, opts: opts}
	if s.proc, err = serverUser(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if s.port, err = freePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}
