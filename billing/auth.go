package billing

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
)

// Principal is who a request acts for: the key presented, its owner and
// the owner's plan.
type Principal struct {
	KeyID  uuid.UUID
	UserID uuid.UUID
	Plan   Plan
	hash   string
}

// AuthConfig tunes an [Authenticator]. The zero value gives the defaults.
type AuthConfig struct {
	// TTL is how long a resolved key is trusted before it is read again,
	// which bounds how stale a plan change can be. Default 60 s.
	TTL time.Duration
	// PollInterval is how often the database is asked for keys revoked
	// elsewhere. Default 1 s.
	PollInterval time.Duration
	// MaxStaleness is the longest the cache is trusted without a
	// successful poll; after that every key is read from the database.
	// Default 5 s.
	MaxStaleness time.Duration
	// TouchInterval is how often last-used times are written. Default 30 s.
	TouchInterval time.Duration
	// Logger receives background errors. Default slog.Default().
	Logger *slog.Logger
}

func (c AuthConfig) withDefaults() AuthConfig {
	if c.TTL <= 0 {
		c.TTL = time.Minute
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.MaxStaleness <= 0 {
		c.MaxStaleness = 5 * time.Second
	}
	if c.TouchInterval <= 0 {
		c.TouchInterval = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// clockSkew is the margin by which a revocation poll looks back, to cover
// clocks that differ between instances.
const clockSkew = 30 * time.Second

// maxNegative bounds the cache of keys known not to exist.
const maxNegative = 10_000

// Authenticator resolves API keys to principals, with a bounded-staleness
// cache described in the package documentation. It is safe for concurrent
// use. Call [Authenticator.Run] to keep the cache fresh.
type Authenticator struct {
	db  bun.IDB
	cfg AuthConfig

	mu       sync.RWMutex
	keys     map[string]cachedKey   // by key hash
	unknown  map[string]time.Time   // hashes known not to resolve, until when
	used     map[uuid.UUID]*lastUse // keys used since the last touch, and when
	polledAt time.Time              // start of the last successful poll
}

type cachedKey struct {
	p       Principal
	expires time.Time
}

// NewAuthenticator returns an Authenticator reading keys from db.
func NewAuthenticator(db bun.IDB, cfg AuthConfig) *Authenticator {
	return &Authenticator{
		db:       db,
		cfg:      cfg.withDefaults(),
		keys:     make(map[string]cachedKey),
		unknown:  make(map[string]time.Time),
		used:     make(map[uuid.UUID]*lastUse),
		polledAt: time.Now(),
	}
}

// Authenticate returns the principal of key. The error wraps
// [tradekit.ErrUnauthorized] when the key is malformed, unknown or revoked;
// any other error comes from the database.
func (a *Authenticator) Authenticate(ctx context.Context, key string) (Principal, error) {
	if !wellFormed(key) {
		return Principal{}, fmt.Errorf("billing: malformed key: %w", tradekit.ErrUnauthorized)
	}
	hash := HashKey(key)
	now := time.Now()

	a.mu.RLock()
	fresh := now.Sub(a.polledAt) < a.cfg.MaxStaleness
	c, hit := a.keys[hash]
	until, isUnknown := a.unknown[hash]
	a.mu.RUnlock()
	if fresh && hit && now.Before(c.expires) &&
		subtle.ConstantTimeCompare([]byte(c.p.hash), []byte(hash)) == 1 {
		a.markUsed(c.p.KeyID)
		return c.p, nil
	}
	if fresh && isUnknown && now.Before(until) {
		return Principal{}, fmt.Errorf("billing: unknown or revoked key: %w", tradekit.ErrUnauthorized)
	}

	p, err := NewStore(a.db).principal(ctx, hash)
	if err != nil {
		if errors.Is(err, tradekit.ErrUnauthorized) {
			a.mu.Lock()
			if len(a.unknown) >= maxNegative {
				clear(a.unknown)
			}
			a.unknown[hash] = now.Add(a.cfg.TTL)
			a.mu.Unlock()
		}
		return Principal{}, err
	}
	a.mu.Lock()
	a.keys[hash] = cachedKey{p: p, expires: now.Add(a.cfg.TTL)}
	delete(a.unknown, hash)
	a.mu.Unlock()
	a.markUsed(p.KeyID)
	return p, nil
}

// Revoke revokes the key with the given id and forgets it at once. The
// error wraps [tradekit.ErrNotFound] when there is no such key, and
// [tradekit.ErrConflict] when it was already revoked (it is forgotten all
// the same); see [Store.RevokeKey].
func (a *Authenticator) Revoke(ctx context.Context, id uuid.UUID) error {
	k, err := NewStore(a.db).RevokeKey(ctx, id)
	if err != nil && !errors.Is(err, tradekit.ErrConflict) {
		return err
	}
	a.forget(k.Hash)
	return err
}

// Run keeps the cache fresh until ctx is done: it polls for revoked keys
// every PollInterval and writes last-used times every TouchInterval.
func (a *Authenticator) Run(ctx context.Context) {
	poll := time.NewTicker(a.cfg.PollInterval)
	defer poll.Stop()
	touch := time.NewTicker(a.cfg.TouchInterval)
	defer touch.Stop()
	for {
		select {
		case <-ctx.Done():
			a.touch(context.WithoutCancel(ctx))
			return
		case <-poll.C:
			if err := a.Poll(ctx); err != nil && ctx.Err() == nil {
				a.cfg.Logger.Warn("billing: revocation poll failed", "err", err)
			}
		case <-touch.C:
			a.touch(ctx)
		}
	}
}

// Poll forgets the keys revoked since the previous successful poll, as
// [Authenticator.Run] does every PollInterval.
func (a *Authenticator) Poll(ctx context.Context) error {
	start := time.Now()
	a.mu.RLock()
	since := a.polledAt.Add(-clockSkew)
	a.mu.RUnlock()
	hashes, err := NewStore(a.db).revokedSince(ctx, since.UTC())
	if err != nil {
		return err
	}
	a.mu.Lock()
	for _, h := range hashes {
		delete(a.keys, h)
	}
	a.polledAt = start
	a.mu.Unlock()
	return nil
}

func (a *Authenticator) forget(hash string) {
	a.mu.Lock()
	delete(a.keys, hash)
	a.mu.Unlock()
}

// markUsed records that a request with the key id is accepted now: the
// time [Authenticator.touch] writes as the key's last use.
func (a *Authenticator) markUsed(id uuid.UUID) {
	now := time.Now().UnixNano()
	a.mu.RLock()
	last, ok := a.used[id]
	if ok {
		// Under the read lock, so that touch cannot take the map away
		// before the time is in.
		last.record(now)
	}
	a.mu.RUnlock()
	if ok {
		return
	}
	a.mu.Lock()
	if last, ok = a.used[id]; !ok {
		last = new(lastUse)
		a.used[id] = last
	}
	last.record(now)
	a.mu.Unlock()
}

// lastUse is the time of the last accepted request with a key, in Unix
// nanoseconds; requests record it concurrently.
type lastUse struct{ ns atomic.Int64 }

// record stores t unless a later time is stored.
func (u *lastUse) record(t int64) {
	for {
		old := u.ns.Load()
		if old >= t || u.ns.CompareAndSwap(old, t) {
			return
		}
	}
}

// touch writes the last-used time of the keys used since the last touch:
// the time of each one's last accepted request, not the time of writing.
func (a *Authenticator) touch(ctx context.Context) {
	a.mu.Lock()
	used := a.used
	a.used = make(map[uuid.UUID]*lastUse, len(used))
	a.mu.Unlock()
	times := make(map[uuid.UUID]time.Time, len(used))
	for id, last := range used {
		times[id] = time.Unix(0, last.ns.Load()).UTC()
	}
	if err := NewStore(a.db).touchKeys(ctx, times); err != nil {
		a.cfg.Logger.Warn("billing: recording key use failed", "err", err)
	}
}
