package marketdata

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/database"
)

// versionsChannel is the PostgreSQL notification channel on which
// [Store.SavePrices] announces new price versions. A payload is a
// comma-separated list of asset ids, or pingPayload.
const (
	versionsChannel = PricesChannel
	pingPayload     = "ping"
)

// PricesChannel is the PostgreSQL notification channel on which every
// price change made by [Store.SavePrices] is announced when its
// transaction commits. A payload is a comma-separated list of the asset
// ids whose prices changed, or "ping" (sent by [Versions.Run] to check
// that notifications arrive); listeners other than Versions should treat
// any payload as a wake-up.
const PricesChannel = "tradekit_prices"

// Versions answers [Store.PriceVersion] from memory where it safely can.
//
// On PostgreSQL, [Versions.Run] listens for the notifications that every
// price change sends in its transaction (NOTIFY, delivered at commit), and
// Versions keeps the versions it has read until a notification names
// their asset. A change made by any process therefore reaches the cache as
// soon as PostgreSQL delivers the notification, typically well under a
// millisecond after the commit. To stay trustworthy when notifications
// could be lost, Versions sends itself a ping notification every
// [VersionsConfig.PingInterval] and serves from memory only while
// notifications arrive: when none has arrived for
// [VersionsConfig.MaxSilence], or the listening connection fails, it drops
// everything it knew and reads from the database until listening works
// again. Without Run, and on SQLite, where the read costs microseconds and
// another process (the importer) gives no notice, every call reads the
// database.
//
// Versions is safe for concurrent use.
type Versions struct {
	db  *bun.DB
	cfg VersionsConfig

	mu      sync.Mutex
	trusted bool      // notifications arrive: known entries are current
	heard   time.Time // when the last notification arrived
	seq     uint64    // notifications and failures so far
	known   map[uuid.UUID]PriceVersion
}

// VersionsConfig tunes [Versions]. The zero value gives the defaults.
type VersionsConfig struct {
	// PingInterval is how often Run checks that notifications arrive.
	// Default 1 s.
	PingInterval time.Duration
	// MaxSilence is how long without any notification Run tolerates
	// before it stops trusting what it knows. Default 3 s.
	MaxSilence time.Duration
	// Logger receives listening failures. Default slog.Default().
	Logger *slog.Logger
}

// NewVersions returns a Versions reading from db.
func NewVersions(db *bun.DB, cfg VersionsConfig) *Versions {
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = time.Second
	}
	if cfg.MaxSilence <= 0 {
		cfg.MaxSilence = 3 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Versions{db: db, cfg: cfg, known: make(map[uuid.UUID]PriceVersion)}
}

// PriceVersion is [Store.PriceVersion], from memory when Versions can
// trust it.
func (v *Versions) PriceVersion(ctx context.Context, assetID uuid.UUID) (PriceVersion, error) {
	v.mu.Lock()
	pv, ok := v.known[assetID]
	// The silence is checked here too, so that a stalled Run cannot
	// stretch it.
	trusted := v.trusted && time.Since(v.heard) < v.cfg.MaxSilence
	seq := v.seq
	v.mu.Unlock()
	if ok && trusted {
		return pv, nil
	}
	pv, err := NewStore(v.db).PriceVersion(ctx, assetID)
	if err != nil || !trusted {
		return pv, err
	}
	v.mu.Lock()
	// Keep it only if no notification came meanwhile: one that did may
	// be for a change this read did not see.
	if v.trusted && v.seq == seq {
		v.known[assetID] = pv
	}
	v.mu.Unlock()
	return pv, nil
}

// Listening reports whether Versions currently answers from memory:
// [Versions.Run] listens and notifications arrive.
func (v *Versions) Listening() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.trusted && time.Since(v.heard) < v.cfg.MaxSilence
}

// Run listens for price changes until ctx is done, reconnecting after
// failures. It returns at once on databases other than PostgreSQL.
// Where notifications cannot reach this process (through a transaction
// pooler with no direct connection for LISTEN, see
// [database.NewListener]), Versions reads from the database, and Run
// tries again every minute without a word more.
func (v *Versions) Run(ctx context.Context) {
	if v.db.Dialect().Name() != dialect.PG {
		return
	}
	for ctx.Err() == nil {
		err := v.listen(ctx)
		v.distrust()
		if ctx.Err() != nil {
			return
		}
		wait := v.cfg.PingInterval
		if errors.Is(err, database.ErrNoNotifications) {
			wait = time.Minute
		} else {
			v.cfg.Logger.Warn("price change notifications lost; reading price versions from the database", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// listen runs one listening connection until it fails or ctx is done.
func (v *Versions) listen(ctx context.Context) error {
	ln, err := database.NewListener(ctx, v.db, versionsChannel)
	if err != nil {
		return err
	}
	defer ln.Close()
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel(nil)
		wg.Wait() // no ping outlives Run
	}()
	wg.Add(1)

	v.mu.Lock()
	v.heard = time.Now() // the silence counts from here
	v.mu.Unlock()
	go func() {
		defer wg.Done()
		t := time.NewTicker(v.cfg.PingInterval)
		defer t.Stop()
		for {
			// Through the pool, as any change would come.
			_, err := v.db.ExecContext(ctx, "SELECT pg_notify(?, ?)", versionsChannel, pingPayload)
			v.mu.Lock()
			silence := time.Since(v.heard)
			v.mu.Unlock()
			if silence > v.cfg.MaxSilence {
				cancel(errors.Join(errors.New("no notification for "+silence.Round(time.Millisecond).String()), err))
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()

	for {
		payload, err := ln.Receive(ctx)
		if err != nil {
			if cause := context.Cause(ctx); cause != nil {
				return cause
			}
			return err
		}
		v.notified(payload)
	}
}

// notified applies one notification. Any notification shows that the
// connection listens; a ping after a failure is what makes Versions trust
// what it reads again, from an empty cache.
func (v *Versions) notified(payload string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	v.heard = time.Now()
	if !v.trusted {
		clear(v.known)
		v.trusted = true
	}
	if payload == pingPayload {
		return
	}
	for _, s := range strings.Split(payload, ",") {
		id, err := uuid.Parse(s)
		if err != nil {
			clear(v.known) // not ours to read: forget everything
			return
		}
		delete(v.known, id)
	}
}

// distrust drops what Versions knows and reads the database until
// notifications arrive again.
func (v *Versions) distrust() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	v.trusted = false
	clear(v.known)
}

// notifyVersions announces, on PostgreSQL, that the price versions of ids
// changed; the notification is delivered when the transaction commits.
func (s *Store) notifyVersions(ctx context.Context, ids []uuid.UUID) error {
	if s.db.Dialect().Name() != dialect.PG {
		return nil
	}
	const perPayload = 200 // 7,400 bytes; PostgreSQL allows under 8,000
	for len(ids) > 0 {
		n := min(len(ids), perPayload)
		var b strings.Builder
		for i, id := range ids[:n] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(id.String())
		}
		if _, err := s.db.ExecContext(ctx, "SELECT pg_notify(?, ?)", versionsChannel, b.String()); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}
