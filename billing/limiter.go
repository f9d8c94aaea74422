package billing

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// maxLease bounds the requests a [Limiter] counts in the database ahead of
// their arrival, and leaseShare is the share of what is left that it may
// take: at most 1/16 of the allowance still open.
const (
	maxLease   = 64
	leaseShare = 16
)

// Limiter counts requests against plan limits in the database, like
// [Store.Consume], with two things added for busy users.
//
// It counts per account: the members of an account share one allowance
// (pass [Principal.AccountID] or [User.AccountID]).
//
// It queues one account's requests within this process, so that concurrent
// requests do not pile up on the counter's row lock, where PostgreSQL wakes
// every waiter at each commit and the unlucky ones can lose for hundreds of
// milliseconds. Go's mutex queues them fairly instead.
//
// And it leases: when an account has plenty of allowance left in the current
// minute, it counts several requests in one database round trip and lets
// the next ones through from memory. A lease is at most 64 requests and at
// most 1/16 of what the database says is left, so close to a limit leases
// shrink to a single request and counting is exact again. Requests are
// always counted before they are allowed, so across any number of
// processes no more than the limit ever get through. The price: a process
// may hold a few counted but unused requests while another is refused, and
// X-RateLimit-Remaining is this process's view. Unused requests go back to
// the day's count when the minute ends ([Limiter.Flush]) or the process
// stops ([Limiter.Close]). A refusal is remembered until the minute ends,
// so requests past the limit cost no round trip either.
//
// A Limiter is safe for concurrent use.
type Limiter struct {
	st       *Store
	mu       sync.Mutex
	accounts map[uuid.UUID]*accountLimit
}

// accountLimit is one account's queue and lease.
type accountLimit struct {
	id   uuid.UUID
	mu   sync.Mutex // held while counting
	refs int        // holders and waiters; guarded by Limiter.mu

	// Guarded by mu:
	lim    Limits    // the limits the lease was taken under
	minute time.Time // the minute window of the lease; zero for none
	tokens int       // requests counted in the database, not yet used
	use    Usage     // the database's view after the last take; zero for none this minute
}

// NewLimiter returns a Limiter counting in db.
func NewLimiter(db bun.IDB) *Limiter {
	return &Limiter{st: NewStore(db), accounts: make(map[uuid.UUID]*accountLimit)}
}

// Consume counts one request of the account at time now against lim and
// reports whether it may proceed. See [Store.Consume] and the type's doc
// for leases.
func (l *Limiter) Consume(ctx context.Context, accountID uuid.UUID, lim Limits, now time.Time) (Usage, error) {
	u := l.acquire(accountID)
	defer l.release(u)
	u.mu.Lock()
	defer u.mu.Unlock()

	minute := now.UTC().Truncate(time.Minute)
	if !u.minute.Equal(minute) || u.lim != lim {
		if err := u.giveBack(ctx, l.st); err != nil {
			return Usage{}, err
		}
		u.lim, u.minute, u.use = lim, minute, Usage{}
	}
	if u.tokens > 0 {
		u.tokens--
		use := u.use
		use.Remaining += u.tokens
		return use, nil
	}
	if !u.use.Reset.IsZero() && !u.use.Allowed {
		// Refused earlier this minute. Within a minute the stored counts
		// only fall when a process stops and gives its lease back, so
		// this answer stays right, and an account that keeps knocking costs
		// the database nothing.
		use := u.use
		use.RetryAfter = use.Reset.Sub(now)
		return use, nil
	}

	n := 1 // what is left in a new minute is not known yet
	if !u.use.Reset.IsZero() {
		n = min(max(u.use.Remaining/leaseShare, 1), maxLease)
	}
	granted, use, err := l.st.take(ctx, accountID, lim, now, n)
	if err != nil {
		return Usage{}, err
	}
	u.use = use
	if granted == 0 {
		return use, nil
	}
	u.tokens = granted - 1
	use.Remaining += u.tokens
	return use, nil
}

// Usage returns the account's requests counted in the windows containing
// now, as [Store.Usage] does, less the unused requests this Limiter holds
// for the account: exact when one process serves the account, and
// otherwise ahead by at most the other processes' leases.
func (l *Limiter) Usage(ctx context.Context, accountID uuid.UUID, now time.Time) (CurrentUsage, error) {
	u := l.acquire(accountID)
	defer l.release(u)
	u.mu.Lock() // no lease is taken or spent while the database is read
	defer u.mu.Unlock()
	use, err := l.st.Usage(ctx, accountID, now)
	if err != nil {
		return CurrentUsage{}, err
	}
	if u.minute.Equal(now.UTC().Truncate(time.Minute)) {
		use.Minute -= u.tokens
		use.Day -= u.tokens
	}
	return use, nil
}

// acquire returns the account's entry, counted as in use.
func (l *Limiter) acquire(accountID uuid.UUID) *accountLimit {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.accounts[accountID]
	if u == nil {
		u = &accountLimit{id: accountID}
		l.accounts[accountID] = u
	}
	u.refs++
	return u
}

// release ends a use of the account's entry from acquire. The entry stays,
// with its lease and what the database said, until [Limiter.Flush].
func (l *Limiter) release(u *accountLimit) {
	l.mu.Lock()
	u.refs--
	l.mu.Unlock()
}

// Flush gives back the unused requests of leases whose minute has ended
// before now and forgets those accounts. Call it every few seconds: the
// Limiter remembers each account it has seen until then.
func (l *Limiter) Flush(ctx context.Context, now time.Time) error {
	return l.flush(ctx, func(u *accountLimit) bool { return u.minute.Add(time.Minute).Compare(now) <= 0 })
}

// Close gives back every unused request this Limiter holds, for a process
// that stops. The Limiter stays usable.
func (l *Limiter) Close(ctx context.Context) error {
	return l.flush(ctx, func(*accountLimit) bool { return true })
}

// flush gives back the leases of the idle accounts for which done is true.
func (l *Limiter) flush(ctx context.Context, done func(*accountLimit) bool) error {
	l.mu.Lock()
	idle := make(map[uuid.UUID]*accountLimit)
	for id, u := range l.accounts {
		if u.refs == 0 {
			idle[id] = u
			u.refs++ // keeps the entry while flushing it
		}
	}
	l.mu.Unlock()

	var errs []error
	for id, u := range idle {
		u.mu.Lock()
		forget := false
		if done(u) {
			err := u.giveBack(ctx, l.st)
			errs = append(errs, err)
			forget = err == nil
		}
		u.mu.Unlock()
		l.mu.Lock()
		if u.refs--; u.refs == 0 && forget {
			delete(l.accounts, id)
		}
		l.mu.Unlock()
	}
	return errors.Join(errs...)
}

// giveBack uncounts the lease's unused requests in the database.
func (u *accountLimit) giveBack(ctx context.Context, st *Store) error {
	if u.tokens == 0 {
		return nil
	}
	if err := st.giveBack(ctx, u.id, windows(u.minute, u.lim), u.tokens); err != nil {
		return err
	}
	u.tokens = 0
	return nil
}
