package database_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

// where runs one read through r and returns where it ran, as the
// database itself says: "replica" or "primary".
func where(t *testing.T, r *database.Replicas) string {
	t.Helper()
	var standby, told bool
	err := r.Read(context.Background(), func(db bun.IDB, replica bool) error {
		told = replica
		return db.QueryRowContext(context.Background(), "SELECT pg_is_in_recovery()").Scan(&standby)
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if told != standby {
		t.Fatalf("Read told fn replica=%v on a server whose pg_is_in_recovery() is %v", told, standby)
	}
	if standby {
		return "replica"
	}
	return "primary"
}

// eventually waits up to d for where to answer want, and fails the test
// otherwise.
func eventually(t *testing.T, r *database.Replicas, want string, d time.Duration) {
	t.Helper()
	testkit.Eventually(t, d, func() error {
		if got := where(t, r); got != want {
			return fmt.Errorf("reads still go to the %s; status %+v", got, r.Status())
		}
		return nil
	}, "reads to go to the %s", want)
}

// TestReplicas runs reads through a router over a real primary and
// streaming standby: a standby down at start delays nothing; a current
// one takes the reads (the counts say so), also when nothing is written
// for longer than the bound; one whose replay is paused while the
// primary writes is skipped once the bound passes, and taken again once
// replay resumes; one killed under the router costs a retry on the
// primary, never an error.
func TestReplicas(t *testing.T) {
	rp := dbtest.StartReplicated(t)
	ctx := context.Background()
	primary, err := database.Open(ctx, rp.PrimaryDSN(), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	write := func() {
		t.Helper()
		if _, err := primary.ExecContext(ctx, "INSERT INTO replica_probe VALUES (1)"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := primary.ExecContext(ctx, "CREATE TABLE replica_probe (n int)"); err != nil {
		t.Fatal(err)
	}

	// Down when the router starts.
	if err := rp.Standby.Kill(); err != nil {
		t.Fatal(err)
	}
	const maxLag = time.Second
	r := database.NewReplicas(primary, []string{rp.StandbyDSN()}, database.ReplicasConfig{
		MaxLag: maxLag, Interval: 100 * time.Millisecond, Options: database.Options{Timeout: 2 * time.Second}})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		r.Run(runCtx)
		close(done)
	}()
	defer func() {
		stop()
		<-done
	}()

	t.Run("DownAtStart", func(t *testing.T) {
		testkit.Eventually(t, 10*time.Second, func() bool { st := r.Status(); return len(st) == 1 && st[0].Err != nil },
			"a failed check of the standby")
		for range 5 {
			if got := where(t, r); got != "primary" {
				t.Fatalf("read ran on the %s with the standby down", got)
			}
		}
		if st := r.Status(); len(st) != 1 || st[0].Healthy || st[0].Err == nil {
			t.Errorf("Status() = %+v, want one unhealthy replica with a reason", st)
		}
	})

	t.Run("Current", func(t *testing.T) {
		if err := rp.Standby.Start(); err != nil {
			t.Fatal(err)
		}
		eventually(t, r, "replica", 10*time.Second)
		p0, r0 := r.Queries()
		// Nothing may happen while idle for twice the bound: an idle,
		// caught-up replica stays current. A bounded sleep, not a wait.
		time.Sleep(2 * maxLag)
		for range 10 {
			if got := where(t, r); got != "replica" {
				t.Fatalf("read ran on the %s with a current standby; status %+v", got, r.Status())
			}
		}
		p1, r1 := r.Queries()
		if p1 != p0 || r1 != r0+10 {
			t.Errorf("Queries() went from (%d, %d) to (%d, %d), want 10 more on the replica", p0, r0, p1, r1)
		}
		if st := r.Status()[0]; !st.Healthy || st.Lag > maxLag {
			t.Errorf("Status() = %+v, want healthy", st)
		}
	})

	t.Run("ReplayPaused", func(t *testing.T) {
		if err := rp.PauseReplay(ctx); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		write()
		// Within the bound the replica may still answer; past it (plus a
		// check or two) it must not.
		eventually(t, r, "primary", maxLag+time.Second)
		if d := time.Since(start); d < maxLag/2 {
			t.Errorf("the paused standby was skipped after %s, before the bound of %s could pass", d, maxLag)
		}
		for range 5 {
			write()
			if got := where(t, r); got != "primary" {
				t.Fatalf("read ran on the %s while its replay is paused", got)
			}
		}
		if err := testkit.Poll(5*time.Second, func() bool {
			st := r.Status()[0]
			return !st.Healthy && st.LagBytes > 0 && st.Lag > maxLag
		}); err != nil {
			t.Errorf("Status() = %+v, want unhealthy, lagging in bytes and past the bound in time", r.Status()[0])
		}
	})

	t.Run("ReplayResumed", func(t *testing.T) {
		if err := rp.ResumeReplay(ctx); err != nil {
			t.Fatal(err)
		}
		eventually(t, r, "replica", 5*time.Second)
	})

	t.Run("Killed", func(t *testing.T) {
		// A router that checks once, at start, and trusts that check for
		// long: the killed replica is found by the query that fails on it.
		slow := database.NewReplicas(primary, []string{rp.StandbyDSN()}, database.ReplicasConfig{
			MaxLag: time.Minute, Interval: time.Hour, Options: database.Options{Timeout: 2 * time.Second}})
		sctx, sstop := context.WithCancel(ctx)
		sdone := make(chan struct{})
		go func() {
			slow.Run(sctx)
			close(sdone)
		}()
		defer func() {
			sstop()
			<-sdone
		}()
		testkit.Eventually(t, 5*time.Second, func() error {
			if got := where(t, slow); got != "replica" {
				return fmt.Errorf("reads go to the %s; status %+v", got, slow.Status())
			}
			return nil
		}, "the slow router to use the standby")
		if err := rp.Standby.Kill(); err != nil {
			t.Fatal(err)
		}
		p0, r0 := slow.Queries()
		for range 5 {
			if got := where(t, slow); got != "primary" {
				t.Fatalf("read ran on the %s after the standby was killed", got)
			}
		}
		p1, r1 := slow.Queries()
		if r1 != r0+1 || p1 != p0+5 {
			t.Errorf("Queries() went from (%d, %d) to (%d, %d), want 1 failed try on the replica, then 5 on the primary",
				p0, r0, p1, r1)
		}
		if st := slow.Status()[0]; st.Healthy || st.Err == nil {
			t.Errorf("Status() = %+v, want the replica marked down with the query's error", st)
		}
		// The regular router finds it down too, and reads go on.
		eventually(t, r, "primary", 2*time.Second)
	})

	t.Run("Restarted", func(t *testing.T) {
		if err := rp.Standby.Start(); err != nil {
			t.Fatal(err)
		}
		write()
		eventually(t, r, "replica", 10*time.Second)
	})
}

// TestReplicasNone: without replicas every read runs on the primary.
func TestReplicasNone(t *testing.T) {
	db := dbtest.SQLite(t)
	r := database.NewReplicas(db, nil, database.ReplicasConfig{})
	for range 3 {
		err := r.Read(context.Background(), func(got bun.IDB, replica bool) error {
			if got != bun.IDB(db) || replica {
				t.Errorf("Read ran fn on %v (replica %v), want the primary", got, replica)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if p, rep := r.Queries(); p != 3 || rep != 0 {
		t.Errorf("Queries() = %d, %d, want 3, 0", p, rep)
	}
}
