package testkit

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB that records Fatalf instead of stopping the
// test, so that Eventually's failure can be checked.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestClock(t *testing.T) {
	t.Parallel()
	var zero Clock
	if got := zero.Now(); time.Since(got) > time.Minute || time.Since(got) < 0 {
		t.Errorf("the zero Clock's Now() = %v, want the wall clock's", got)
	}
	t0 := time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)
	c := NewClock(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Errorf("Now() = %v, want %v", got, t0)
	}
	if got := c.Add(90 * time.Second); !got.Equal(t0.Add(90*time.Second)) || !c.Now().Equal(got) {
		t.Errorf("Add(90s) = %v, Now() = %v; want %v", got, c.Now(), t0.Add(90*time.Second))
	}
	c.Set(t0.Add(-time.Hour))
	if got := c.Now(); !got.Equal(t0.Add(-time.Hour)) {
		t.Errorf("Now() after Set() = %v, want %v", got, t0.Add(-time.Hour))
	}
	c.Set(time.Time{})
	if got := c.Now(); time.Since(got) > time.Minute {
		t.Errorf("Now() after Set(zero) = %v, want the wall clock's", got)
	}
	if got := c.Add(time.Hour); time.Until(got) < 59*time.Minute || time.Until(got) > time.Hour {
		t.Errorf("Add(1h) on the wall clock = %v, want an hour from now", got)
	}
}

// TestClockConcurrent moves and reads one Clock from many goroutines; the
// race detector checks it, and the moves must all count.
func TestClockConcurrent(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)
	c := NewClock(t0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Add(time.Second)
				c.Now()
			}
		}()
	}
	wg.Wait()
	if got, want := c.Now(), t0.Add(800*time.Second); !got.Equal(want) {
		t.Errorf("after 800 concurrent Add(1s): %v, want %v", got, want)
	}
}

func TestEventually(t *testing.T) {
	t.Parallel()
	t.Run("holds later", func(t *testing.T) {
		t.Parallel()
		r := &recorder{TB: t}
		n := 0
		Eventually(r, 5*time.Second, func() bool { n++; return n == 4 }, "the fourth try")
		if r.failed != "" || n != 4 {
			t.Errorf("failed %q after %d tries, want success at the fourth", r.failed, n)
		}
	})
	t.Run("bool never", func(t *testing.T) {
		t.Parallel()
		r := &recorder{TB: t}
		start := time.Now()
		Eventually(r, 30*time.Millisecond, func() bool { return false }, "the %s to arrive", "order")
		if took := time.Since(start); took < 30*time.Millisecond || took > 2*time.Second {
			t.Errorf("gave up after %v, want about 30ms", took)
		}
		if !strings.Contains(r.failed, "the order to arrive") || !strings.Contains(r.failed, "30ms") ||
			!strings.Contains(r.failed, errFalse.Error()) {
			t.Errorf("failure %q does not name what was awaited, the timeout and the condition", r.failed)
		}
	})
	t.Run("error never", func(t *testing.T) {
		t.Parallel()
		r := &recorder{TB: t}
		n := 0
		Eventually(r, 20*time.Millisecond, func() error { n++; return fmt.Errorf("try %d", n) }, "the fill")
		if want := fmt.Sprintf("try %d", n); n < 2 || !strings.Contains(r.failed, "the fill") || !strings.HasSuffix(r.failed, want) {
			t.Errorf("failure %q after %d tries, want it to name the fill and end with the last error %q", r.failed, n, want)
		}
	})
	t.Run("no timeout", func(t *testing.T) {
		t.Parallel()
		r := &recorder{TB: t}
		n := 0
		Eventually(r, 0, func() error { n++; return errors.New("not yet") }, "one try")
		if n != 1 || r.failed == "" {
			t.Errorf("a zero timeout tried %d times (failure %q), want once and a failure", n, r.failed)
		}
	})
}

// TestPollBackOff checks that the pauses between polls grow: a condition
// that never holds is polled a few dozen times in 300ms, not hundreds.
func TestPollBackOff(t *testing.T) {
	t.Parallel()
	n := 0
	err := Poll(300*time.Millisecond, func() bool { n++; return false })
	if !errors.Is(err, errFalse) {
		t.Errorf("Poll() = %v, want %v", err, errFalse)
	}
	// 1+2+4+8+16+32 ms, then 50 ms pauses: about 11 polls in 300 ms.
	if n < 5 || n > 20 {
		t.Errorf("%d polls in 300ms, want about 11", n)
	}
}
