package testkit

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// Condition is what [Eventually] polls: a func() bool that reports whether
// the awaited thing happened, or a func() error that returns nil once it
// did and otherwise says what is still missing.
type Condition interface {
	func() bool | func() error
}

// The waits between two polls of [Eventually]: the first is short, so that
// a condition that holds almost at once costs almost nothing, and each
// next one doubles up to maxPause, so that a slow one does not spin.
const (
	firstPause = time.Millisecond
	maxPause   = 50 * time.Millisecond
)

// errFalse is the last error of a func() bool condition that never held.
var errFalse = errors.New("the condition was still false")

// Eventually polls cond until it holds and fails tb with t.Fatalf if it
// still does not after timeout. The failure names what is awaited
// (what, formatted with args as by [fmt.Sprintf] when there are any) and
// the condition's last error. The condition is tried at once, then after
// pauses that start at 1ms and double up to 50ms; it is tried a last time
// at the deadline.
//
// Like t.Fatal, Eventually must be called from the goroutine running the
// test; cond may be called from it only.
func Eventually[C Condition](tb testing.TB, timeout time.Duration, cond C, what string, args ...any) {
	tb.Helper()
	if err := Poll(timeout, cond); err != nil {
		if len(args) > 0 {
			what = fmt.Sprintf(what, args...)
		}
		tb.Fatalf("waited %v for %s: %v", timeout, what, err)
	}
}

// Poll is [Eventually] without a test: it polls cond the same way and
// returns nil once it holds, or cond's last error if it still does not
// after timeout. It suits a goroutine other than the test's, which must
// not call t.Fatal.
func Poll[C Condition](timeout time.Duration, cond C) error {
	check := asCheck(cond)
	deadline := time.Now().Add(timeout)
	pause := firstPause
	for {
		err := check()
		if err == nil {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return err
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, maxPause)
	}
}

// asCheck turns either kind of condition into a func() error.
func asCheck[C Condition](cond C) func() error {
	switch f := any(cond).(type) {
	case func() error:
		return f
	case func() bool:
		return func() error {
			if f() {
				return nil
			}
			return errFalse
		}
	}
	panic("testkit: unreachable")
}
