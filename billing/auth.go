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

// Principal is who a request acts for: the key presented, its owner, the
// owner's account and the owner's plan.
type Principal struct {
	KeyID  uuid.UUID
	UserID uuid.UUID
	// AccountID is the account of the owner, whose members share the
	// plan's limits: rate limits are counted under it.
	AccountID uuid.UUID
	Plan      Plan
	hash      string
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
	// FailuresPerMinute is how many failed authentications one client
	// may cause in a UTC minute; past it, a key that is not cached is
	// refused without a database lookup (see [ThrottledError]). Other
	// clients are never refused for it. Default 30; negative means no
	// bound.
	FailuresPerMinute int
	// Logger receives background errors. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock of the times written to the database: a key's
	// last use and its revocation. Cache lifetimes, polls and the failure
	// throttle measure real time. Default time.Now.
	Now func() time.Time
}

func (c AuthConfig) withDefaults() AuthConfig {
	if c.TTL <= 0 {
		c.TTL = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
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
	if c.FailuresPerMinute == 0 {
		c.FailuresPerMinute = 30
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

// maxClients bounds the clients whose failures are counted in one
// minute; past it, new clients go uncounted until the minute ends.
const maxClients = 10_000

// Authenticator resolves API keys to principals, with a bounded-staleness
// cache described in the package documentation. It is safe for concurrent
// use. Call [Authenticator.Run] to keep the cache fresh.
type Authenticator struct {
	db  bun.IDB
	cfg AuthConfig

	mu       sync.RWMutex
	keys     map[string]cachedKey   // by key hash
	unknown  negativeCache          // hashes known not to resolve
	used     map[uuid.UUID]*lastUse // keys used since the last touch, and when
	polledAt time.Time              // start of the last successful poll
	failures failureCounts          // failed authentications this minute
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
		unknown:  negativeCache{until: make(map[string]time.Time)},
		failures: failureCounts{n: make(map[string]int)},
		used:     make(map[uuid.UUID]*lastUse),
		polledAt: time.Now(),
	}
}

// Authenticate returns the principal of key, presented by client (an
// address, or any other name the caller gives the party it serves; ""
// counts no failures). The error wraps [tradekit.ErrUnauthorized] when the
// key is malformed, unknown or revoked, and is a [*ThrottledError] when the
// client has spent its failures of the minute and the key is not cached;
// any other error comes from the database.
func (a *Authenticator) Authenticate(ctx context.Context, key, client string) (Principal, error) {
	now := time.Now()
	if !wellFormed(key) {
		a.fail(client, now)
		return Principal{}, fmt.Errorf("billing: malformed key: %w", tradekit.ErrUnauthorized)
	}
	hash := HashKey(key)

	a.mu.RLock()
	fresh := now.Sub(a.polledAt) < a.cfg.MaxStaleness
	c, hit := a.keys[hash]
	until, isUnknown := a.unknown.until[hash]
	a.mu.RUnlock()
	if fresh && hit && now.Before(c.expires) &&
		subtle.ConstantTimeCompare([]byte(c.p.hash), []byte(hash)) == 1 {
		a.markUsed(c.p.KeyID)
		return c.p, nil
	}
	if fresh && isUnknown && now.Before(until) {
		a.fail(client, now)
		return Principal{}, fmt.Errorf("billing: unknown or revoked key: %w", tradekit.ErrUnauthorized)
	}
	if wait := a.throttled(client, now); wait > 0 {
		return Principal{}, &ThrottledError{RetryAfter: wait}
	}

	p, err := NewStore(a.db).principal(ctx, hash)
	if err != nil {
		if errors.Is(err, tradekit.ErrUnauthorized) {
			a.mu.Lock()
			a.unknown.add(hash, now.Add(a.cfg.TTL))
			a.mu.Unlock()
			a.fail(client, now)
		}
		return Principal{}, err
	}
	a.mu.Lock()
	a.keys[hash] = cachedKey{p: p, expires: now.Add(a.cfg.TTL)}
	delete(a.unknown.until, hash)
	a.mu.Unlock()
	a.markUsed(p.KeyID)
	return p, nil
}

// ThrottledError reports that a client caused more failed authentications
// in a minute than [AuthConfig.FailuresPerMinute] allows, so a key that is
// not cached was refused unread. It wraps [tradekit.ErrRateLimited].
type ThrottledError struct {
	RetryAfter time.Duration // until the minute ends
}

// Error returns a message for the client.
func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many failed authentications from your address; retry in %s", e.RetryAfter.Round(time.Second))
}

// Unwrap returns [tradekit.ErrRateLimited].
func (e *ThrottledError) Unwrap() error { return tradekit.ErrRateLimited }

// fail counts a failed authentication of client.
func (a *Authenticator) fail(client string, now time.Time) {
	if client == "" || a.cfg.FailuresPerMinute < 0 {
		return
	}
	a.mu.Lock()
	a.failures.add(client, now)
	a.mu.Unlock()
}

// throttled returns how long client must wait before a key that is not
// cached is looked up for it again, 0 when it need not.
func (a *Authenticator) throttled(client string, now time.Time) time.Duration {
	if client == "" || a.cfg.FailuresPerMinute < 0 {
		return 0
	}
	a.mu.RLock()
	n := a.failures.count(client, now)
	a.mu.RUnlock()
	if n < a.cfg.FailuresPerMinute {
		return 0
	}
	return now.Truncate(time.Minute).Add(time.Minute).Sub(now)
}

// negativeCache holds key hashes known not to resolve, each until a
// time. Past maxNegative entries it forgets the oldest, so a flood of
// random keys costs at most its own entries, never the cache of the keys
// seen before it.
type negativeCache struct {
	until map[string]time.Time
	order []string // hashes in the order they came, a ring once full
	next  int      // the oldest entry of order once full
}

func (c *negativeCache) add(hash string, until time.Time) {
	if _, ok := c.until[hash]; !ok {
		if len(c.order) < maxNegative {
			c.order = append(c.order, hash)
		} else {
			delete(c.until, c.order[c.next])
			c.order[c.next] = hash
			c.next = (c.next + 1) % maxNegative
		}
	}
	c.until[hash] = until
}

// failureCounts counts failed authentications per client in the current
// UTC minute, for at most maxClients clients. Clients past those go
// uncounted rather than share a count, so that no client's failures ever
// throttle another: a flood from more addresses than that costs the
// database one lookup per new key until the minute ends, which the cache
// of unknown keys bounds.
type failureCounts struct {
	minute int64 // Unix minute of n
	n      map[string]int
}

func (f *failureCounts) add(client string, now time.Time) {
	f.roll(now)
	if _, ok := f.n[client]; !ok && len(f.n) >= maxClients {
		return
	}
	f.n[client]++
}

func (f *failureCounts) count(client string, now time.Time) int {
	if now.Unix()/60 != f.minute {
		return 0
	}
	return f.n[client]
}

func (f *failureCounts) roll(now time.Time) {
	if m := now.Unix() / 60; m != f.minute {
		f.minute = m
		clear(f.n)
	}
}

// Revoke revokes the key with the given id and forgets it at once. The
// error wraps [tradekit.ErrNotFound] when there is no such key, and
// [tradekit.ErrConflict] when it was already revoked (it is forgotten all
// the same); see [Store.RevokeKey].
func (a *Authenticator) Revoke(ctx context.Context, id uuid.UUID) error {
	k, err := NewStore(a.db).RevokeKey(ctx, id, a.cfg.Now())
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
	now := a.cfg.Now().UnixNano()
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
