package testkit

import (
	"sync"
	"time"
)

// Clock is a time source that moves only when told, for the Now field of
// a Config. It is safe for concurrent use, so the goroutines of the code
// under test may read it while the test moves it.
//
// A Clock that was never set, or was set to the zero time, follows the
// wall clock: Now returns [time.Now]. The zero Clock is therefore ready to
// use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the time the clock was set to last, or the wall clock's if
// it was set to the zero time or never set.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		return time.Now()
	}
	return c.t
}

// Set stops the clock at t; the zero t sets it back to the wall clock.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Add moves the clock d forward (backward if d is negative) from what Now
// returns, stops it there and returns the new time. A clock following the
// wall clock stops d from the wall clock's present.
func (c *Clock) Add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		c.t = time.Now()
	}
	c.t = c.t.Add(d)
	return c.t
}
