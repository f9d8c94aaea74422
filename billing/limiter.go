package billing

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Limiter counts requests against plan limits with [Store.Consume], one
// request per user at a time within this process. The counters live in the
// database and stay exact across processes; the queue in front of them
// keeps a busy user's concurrent requests from piling up on the counter's
// row lock, where PostgreSQL wakes every waiter at each commit and the
// unlucky ones can lose for hundreds of milliseconds. Go's mutex queues
// them fairly instead. A Limiter is safe for concurrent use.
type Limiter struct {
	db    bun.IDB
	mu    sync.Mutex
	users map[uuid.UUID]*userLock
}

type userLock struct {
	mu   sync.Mutex
	refs int // holders and waiters
}

// NewLimiter returns a Limiter counting in db.
func NewLimiter(db bun.IDB) *Limiter {
	return &Limiter{db: db, users: make(map[uuid.UUID]*userLock)}
}

// Consume is [Store.Consume], queued per user.
func (l *Limiter) Consume(ctx context.Context, userID uuid.UUID, lim Limits, now time.Time) (Usage, error) {
	l.mu.Lock()
	u := l.users[userID]
	if u == nil {
		u = &userLock{}
		l.users[userID] = u
	}
	u.refs++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if u.refs--; u.refs == 0 {
			delete(l.users, userID)
		}
		l.mu.Unlock()
	}()

	u.mu.Lock()
	defer u.mu.Unlock()
	return NewStore(l.db).Consume(ctx, userID, lim, now)
}
