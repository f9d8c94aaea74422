package dbtest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// ProcessCPU returns the CPU time this process has used so far, user and
// system, for measured runs that report what work costs.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BackendCPU returns the CPU time used so far by each PostgreSQL backend
// connected to db's database, by pid, from /proc/PID/schedstat (the server
// must run on this machine, as dbtest's does); nil on SQLite.
func BackendCPU(tb testing.TB, db *bun.DB) map[int]time.Duration {
	tb.Helper()
	if db.Dialect().Name() != dialect.PG {
		return nil
	}
	var pids []int
	if err := db.NewRaw("SELECT pid FROM pg_stat_activity WHERE datname = current_database()").Scan(context.Background(), &pids); err != nil {
		tb.Fatal(err)
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		s, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			continue // ended meanwhile
		}
		ns, err := strconv.ParseInt(strings.Fields(string(s))[0], 10, 64)
		if err != nil {
			tb.Fatalf("/proc/%d/schedstat: %v", pid, err)
		}
		out[pid] = time.Duration(ns)
	}
	return out
}
