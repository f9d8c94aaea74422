package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// ErrStale is what a read run by [Replicas.Read] returns (wrapped) when
// the replica it ran on has not yet replayed what the read needs, such
// as the price version the caller already knows: Read then runs it again
// on the primary.
var ErrStale = errors.New("database: the replica is behind the data this read needs")

// ReplicasConfig tunes [Replicas]. The zero value gives the defaults.
type ReplicasConfig struct {
	// MaxLag is how far behind the primary a replica may be and still
	// answer reads (serve --replica-max-lag). Default 5 s.
	MaxLag time.Duration
	// Interval is how often [Replicas.Run] measures each replica's lag
	// and retries the replicas it could not reach. Default 1 s.
	Interval time.Duration
	// Options opens the replicas' connections (see [Open]).
	Options Options
	// Logger receives the replicas' changes of health. Default
	// slog.Default().
	Logger *slog.Logger
	// Opened, when set, is called with each replica's database once it
	// first opens, before any query runs on it: to add query hooks.
	Opened func(db *bun.DB)
}

// Replicas sends read-only queries to PostgreSQL streaming replicas that
// are current enough, and everything else to the primary.
//
// [Replicas.Run] measures every Interval how far each replica is behind
// the primary, by WAL position (LSN) rather than by the time of the last
// replayed transaction, which an idle primary leaves arbitrarily old. It
// samples pg_current_wal_lsn() on the primary and keeps a short history
// of those samples with the time each was taken; then it reads
// pg_last_wal_replay_lsn() (and pg_is_in_recovery()) on each replica. A
// replica that has replayed up to the primary's latest sample is current,
// lag zero, however long ago anything was written. One that is behind
// has replayed at least what the primary had written at the newest sample
// whose LSN it has reached, so its lag is the time since that sample:
//
//	lag = now − max{ t_i : lsn_i ≤ replay LSN }
//
// (unknown, hence too much, when it is behind every sample kept). An idle
// replica of an idle primary thus counts as current, and one whose replay
// is paused while the primary writes counts as lagging once that time
// passes MaxLag. A replica is used while the lag at its last check plus
// the time since that check is within MaxLag, so a stalled measurement
// cannot stretch the bound; one that is unreachable, not in recovery, or
// lagging more is skipped until a later check finds it current again.
//
// Replicas are opened lazily: one that is down when the process starts
// delays nothing, and Run keeps trying it. Without Run no replica is ever
// used. With no replica DSNs at all, [Replicas.Read] runs everything on
// the primary. Replicas is safe for concurrent use.
type Replicas struct {
	primary  *bun.DB
	cfg      ReplicasConfig
	replicas []*replica
	next     atomic.Uint64
	queries  [2]atomic.Uint64 // by target: primary, replica

	mu      sync.Mutex
	history []lsnSample // the primary's samples, oldest first
}

// replica is one streaming replica and what the last check found.
type replica struct {
	dsn  string
	name string // host:port/database, without credentials

	mu   sync.Mutex
	db   *bun.DB // nil until it first opens
	last ReplicaStatus

	usable atomic.Pointer[health] // what Read looks at, without the lock
}

// health is what [Replicas.Read] needs of a replica's last check.
type health struct {
	ok      bool
	lag     time.Duration
	checked time.Time
}

// lsnSample is the primary's WAL position at a time.
type lsnSample struct {
	lsn uint64
	at  time.Time
}

// ReplicaStatus is what the last check of a replica found.
type ReplicaStatus struct {
	// Name is the replica's host, port and database, without credentials.
	Name string
	// Healthy reports whether the replica answers reads.
	Healthy bool
	// Lag is how far the replica's data is behind the primary's, in time
	// (see [Replicas]); LagBytes in WAL bytes.
	Lag      time.Duration
	LagBytes int64
	// Checked is when the replica was last checked; zero before any.
	Checked time.Time
	// Err is why the replica is not healthy: unreachable, not a standby,
	// or lagging; nil when healthy.
	Err error
}

// NewReplicas returns the router of primary and one replica per DSN of
// dsns (PostgreSQL only). It opens nothing: see [Replicas.Run].
func NewReplicas(primary *bun.DB, dsns []string, cfg ReplicasConfig) *Replicas {
	if cfg.MaxLag <= 0 {
		cfg.MaxLag = 5 * time.Second
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Replicas{primary: primary, cfg: cfg}
	seen := map[string]int{}
	for _, dsn := range dsns {
		rep := &replica{dsn: dsn, name: replicaName(dsn)}
		if seen[rep.name]++; seen[rep.name] > 1 {
			rep.name += "#" + strconv.Itoa(seen[rep.name])
		}
		rep.last = ReplicaStatus{Name: rep.name, Err: errors.New("not checked yet")}
		r.replicas = append(r.replicas, rep)
	}
	return r
}

// replicaName returns host:port/database of dsn, without credentials.
func replicaName(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		return "replica"
	}
	return u.Host + u.Path
}

// Primary returns the primary database.
func (r *Replicas) Primary() *bun.DB { return r.primary }

// Len returns the number of replicas configured.
func (r *Replicas) Len() int { return len(r.replicas) }

// MaxLag returns the configured bound on a replica's lag.
func (r *Replicas) MaxLag() time.Duration { return r.cfg.MaxLag }

// The targets of [Replicas.Queries].
const (
	TargetPrimary = "primary"
	TargetReplica = "replica"
)

// Queries returns how many reads [Replicas.Read] has run on the primary
// and on replicas. A read retried on the primary counts on both.
func (r *Replicas) Queries() (primary, replicas uint64) {
	return r.queries[0].Load(), r.queries[1].Load()
}

// Status returns what the last check of each replica found, in the
// order of the DSNs. Healthy is whether Read would use the replica now:
// a healthy check whose lag plus its age is still within MaxLag.
func (r *Replicas) Status() []ReplicaStatus {
	out := make([]ReplicaStatus, len(r.replicas))
	now := time.Now()
	for i, rep := range r.replicas {
		rep.mu.Lock()
		out[i] = rep.last
		rep.mu.Unlock()
		if st := &out[i]; st.Healthy && st.Lag+now.Sub(st.Checked) > r.cfg.MaxLag {
			st.Healthy = false
			st.Err = fmt.Errorf("not checked since %s, when it lagged %s", st.Checked.Format(time.RFC3339Nano), st.Lag.Round(time.Millisecond))
		}
	}
	return out
}

// Read runs fn, a read-only query, on a replica that is current (round
// robin among them), or on the primary when none is; replica tells fn
// which. When fn fails on a replica with an error that the primary may
// not have (a lost connection, a server shutting down, a query cancelled
// by replay, a write refused as read-only, or [ErrStale]), Read runs fn
// again on the primary and returns that outcome, so that a replica that
// dies or falls behind costs a retry, not an error; a replica whose
// connection failed is skipped from then on until a check finds it
// current. fn must not write, and must not be run again by the caller on
// error. Read returns fn's error otherwise.
func (r *Replicas) Read(ctx context.Context, fn func(db bun.IDB, replica bool) error) error {
	if rep := r.pick(); rep != nil {
		r.queries[1].Add(1)
		err := fn(rep.db, true)
		if err == nil || ctx.Err() != nil || !retryOnPrimary(err) {
			return err
		}
		if IsConnectionError(err) {
			rep.markDown(err, r.cfg.Logger)
		}
	}
	r.queries[0].Add(1)
	return fn(r.primary, false)
}

// pick returns a usable replica, the next in turn, or nil.
func (r *Replicas) pick() *replica {
	n := len(r.replicas)
	if n == 0 {
		return nil
	}
	start := int(r.next.Add(1) % uint64(n))
	now := time.Now()
	for i := range n {
		rep := r.replicas[(start+i)%n]
		if h := rep.usable.Load(); h != nil && h.ok && h.lag+now.Sub(h.checked) <= r.cfg.MaxLag {
			return rep
		}
	}
	return nil
}

// Run checks the replicas every Interval until ctx is done (see
// [Replicas]), then closes the replicas' connections. It returns at once
// when there are none.
func (r *Replicas) Run(ctx context.Context) {
	if len(r.replicas) == 0 {
		return
	}
	defer func() {
		for _, rep := range r.replicas {
			rep.usable.Store(nil)
			rep.mu.Lock()
			if rep.db != nil {
				rep.db.Close()
			}
			rep.mu.Unlock()
		}
	}()
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		r.check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check samples the primary's LSN and checks every replica against the
// history of samples.
func (r *Replicas) check(ctx context.Context) {
	timeout := max(2*r.cfg.Interval, time.Second)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lsn, err := currentLSN(cctx, r.primary, "SELECT pg_current_wal_lsn()::text")
	if err != nil {
		// Without the primary's position no lag can be measured: the
		// replicas' last checks age, and pick stops trusting them once
		// MaxLag has passed.
		if ctx.Err() == nil {
			r.cfg.Logger.Warn("measuring replica lag: the primary's WAL position", "err", err)
		}
		return
	}
	now := time.Now()
	history := r.record(lsnSample{lsn: lsn, at: now})
	var wg sync.WaitGroup
	for _, rep := range r.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep.check(cctx, r, history)
		}()
	}
	wg.Wait()
}

// record adds s to the history, drops the samples too old to matter, and
// returns a copy of the history.
func (r *Replicas) record(s lsnSample) []lsnSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.history = append(r.history, s)
	// A replica behind every sample kept has an unknown lag, which counts
	// as too much: keep the samples of a little more than MaxLag.
	keepFrom := s.at.Add(-r.cfg.MaxLag - 2*r.cfg.Interval)
	i := 0
	for i < len(r.history)-1 && r.history[i].at.Before(keepFrom) {
		i++
	}
	r.history = append(r.history[:0], r.history[i:]...)
	return append([]lsnSample(nil), r.history...)
}

// lagOf returns the lag of a replica that has replayed up to replay,
// checked at now, given the primary's samples oldest first, and whether
// it is known.
func lagOf(history []lsnSample, replay uint64, now time.Time) (time.Duration, bool) {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].lsn <= replay {
			if i == len(history)-1 {
				return 0, true // caught up with the latest sample
			}
			return max(now.Sub(history[i].at), 0), true
		}
	}
	return 0, false
}

// check opens the replica if need be, reads its replay position and sets
// its health.
func (rep *replica) check(ctx context.Context, r *Replicas, history []lsnSample) {
	rep.mu.Lock()
	db := rep.db
	rep.mu.Unlock()
	if db == nil {
		var err error
		db, err = Open(ctx, rep.dsn, r.cfg.Options)
		if err != nil {
			rep.set(r, ReplicaStatus{Err: err})
			return
		}
		if r.cfg.Opened != nil {
			r.cfg.Opened(db)
		}
		rep.mu.Lock()
		rep.db = db
		rep.mu.Unlock()
	}
	var inRecovery bool
	var replay *string
	err := db.QueryRowContext(ctx, "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text").Scan(&inRecovery, &replay)
	if err != nil {
		rep.set(r, ReplicaStatus{Err: err})
		return
	}
	if !inRecovery || replay == nil {
		rep.set(r, ReplicaStatus{Err: errors.New("not a standby (pg_is_in_recovery() is false)")})
		return
	}
	at, err := parseLSN(*replay)
	if err != nil {
		rep.set(r, ReplicaStatus{Err: err})
		return
	}
	latest := history[len(history)-1].lsn
	st := ReplicaStatus{}
	if latest > at {
		st.LagBytes = int64(latest - at)
	}
	lag, known := lagOf(history, at, time.Now())
	switch {
	case !known:
		st.Lag = time.Since(history[0].at)
		st.Err = fmt.Errorf("lagging: %d bytes behind, more than %s", st.LagBytes, st.Lag.Round(time.Millisecond))
	case lag > r.cfg.MaxLag:
		st.Lag = lag
		st.Err = fmt.Errorf("lagging: %s behind (%d bytes), over the bound of %s", lag.Round(time.Millisecond), st.LagBytes, r.cfg.MaxLag)
	default:
		st.Lag, st.Healthy = lag, true
	}
	rep.set(r, st)
}

// set records st as the replica's last check, logging a change of health.
func (rep *replica) set(r *Replicas, st ReplicaStatus) {
	st.Name, st.Checked = rep.name, time.Now()
	rep.mu.Lock()
	was := rep.last
	rep.last = st
	rep.mu.Unlock()
	rep.usable.Store(&health{ok: st.Healthy, lag: st.Lag, checked: st.Checked})
	switch {
	case st.Healthy && !was.Healthy:
		r.cfg.Logger.Info("read replica in use", "replica", rep.name, "lag", st.Lag)
	case !st.Healthy && (was.Healthy || was.Checked.IsZero()):
		r.cfg.Logger.Warn("read replica skipped", "replica", rep.name, "reason", st.Err)
	}
}

// markDown makes Read skip the replica until its next check finds it
// current, after a query on it failed with err.
func (rep *replica) markDown(err error, log *slog.Logger) {
	rep.mu.Lock()
	was := rep.last.Healthy
	rep.last.Healthy, rep.last.Err = false, err
	rep.mu.Unlock()
	rep.usable.Store(&health{})
	if was {
		log.Warn("read replica skipped: a query failed", "replica", rep.name, "err", err)
	}
}

// currentLSN runs query, which returns an LSN as text, on db.
func currentLSN(ctx context.Context, db bun.IDB, query string) (uint64, error) {
	var s string
	if err := db.QueryRowContext(ctx, query).Scan(&s); err != nil {
		return 0, err
	}
	return parseLSN(s)
}

// parseLSN parses PostgreSQL's text form of an LSN, "16/B374D848".
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("database: malformed LSN %q", s)
	}
	return h<<32 | l, nil
}

// retryOnPrimary reports whether a read that failed on a replica with
// err should run again on the primary.
func retryOnPrimary(err error) bool {
	if errors.Is(err, ErrStale) || IsConnectionError(err) {
		return true
	}
	switch sqlState(err) {
	case "40001", "40P01": // cancelled by a conflict with recovery (replay)
		return true
	case "25006": // read_only_sql_transaction: a write reached a standby
		return true
	}
	// The replica's handle closed under the read, as Run closes them
	// when it ends.
	return strings.Contains(err.Error(), "sql: database is closed")
}

// IsConnectionError reports whether err is the failure of a database
// connection rather than of a statement: the server unreachable, a
// connection cut or timed out, the server shutting down or refusing
// connections (SQLSTATE classes 08 and 57P01–57P03, 53300). It knows
// the errors of database/sql, net, syscall and pgx.
func IsConnectionError(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED), errors.As(err, &ne):
		return true
	}
	code := sqlState(err)
	switch {
	case strings.HasPrefix(code, "08"), code == "57P01", code == "57P02", code == "57P03", code == "53300":
		return true
	}
	// pgx reports a connection it closed, or that a failure left unusable,
	// without wrapping the cause.
	return pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}

// sqlState returns the SQLSTATE of err, or "" when no error in its chain
// tells one.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
