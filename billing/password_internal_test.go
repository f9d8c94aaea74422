package billing

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestGateBoundsConcurrency runs more one-lane hashes than a gate has
// slots, each held until the test lets it go, and checks that no more than
// the slots ran at once, and that all of them did run.
func TestGateBoundsConcurrency(t *testing.T) {
	t.Parallel()
	const slots, hashes = 3, 12
	g := newGate(slots)
	var inside, most atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, hashes)
	for range hashes {
		wg.Go(func() {
			errs <- g.do(context.Background(), time.Hour, 1, func() {
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				entered <- struct{}{}
				<-release
				inside.Add(-1)
			})
		})
	}
	// Fill every slot, then let one hash out for each that comes in.
	for range slots {
		<-entered
	}
	for range hashes - slots {
		release <- struct{}{}
		<-entered
	}
	for range slots {
		release <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a hash failed: %v", err)
		}
	}
	if got := most.Load(); got != slots {
		t.Errorf("at most %d hashes ran at once, want %d", got, slots)
	}
}

// TestGateWeighsLanes checks that a hash takes a slot per lane: on two
// slots two one-lane hashes run together, a two-lane hash leaves no room
// for another, and a hash of more lanes than slots runs alone rather than
// never.
func TestGateWeighsLanes(t *testing.T) {
	t.Parallel()
	g := newGate(2)
	hold := func(lanes int) (release func()) {
		t.Helper()
		entered, done, out := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(out)
			if err := g.do(context.Background(), time.Hour, lanes, func() { close(entered); <-done }); err != nil {
				t.Errorf("%d lanes: %v", lanes, err)
				close(entered)
			}
		}()
		<-entered
		return func() { close(done); <-out }
	}
	tryNow := func(lanes int) error { return g.do(context.Background(), 0, lanes, func() {}) }

	release := hold(1)
	if err := tryNow(1); err != nil {
		t.Errorf("a one-lane hash beside another on two slots: %v", err)
	}
	release()
	release = hold(2)
	if err := tryNow(1); !errors.Is(err, ErrPasswordBusy) {
		t.Errorf("a one-lane hash beside a two-lane one on two slots: %v, want ErrPasswordBusy", err)
	}
	release()
	if err := g.do(context.Background(), time.Hour, 3, func() {}); err != nil {
		t.Errorf("a three-lane hash on two free slots: %v", err)
	}
}

// TestGateGivesUp checks that a hash finding every slot taken gives up
// with ErrPasswordBusy once its wait is over, or with the context's error
// when the context ends first, without running.
func TestGateGivesUp(t *testing.T) {
	t.Parallel()
	g := newGate(1)
	if !g.sem.TryAcquire(1) { // a hash that does not end
		t.Fatal("a new gate is full")
	}
	ran := false
	err := g.do(context.Background(), 0, 1, func() { ran = true })
	if !errors.Is(err, ErrPasswordBusy) || !errors.Is(err, tradekit.ErrUnavailable) {
		t.Errorf("full gate: %v, want ErrPasswordBusy wrapping ErrUnavailable", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.do(ctx, time.Hour, 1, func() { ran = true }); !errors.Is(err, context.Canceled) {
		t.Errorf("full gate, ended context: %v, want context.Canceled", err)
	}
	if ran {
		t.Error("a hash ran without a slot")
	}
	g.sem.Release(1)
	if err := g.do(context.Background(), 0, 1, func() { ran = true }); err != nil || !ran {
		t.Errorf("free slot: %v, ran %v", err, ran)
	}
}

// TestEveryHashTakesASlot takes every slot of the process's gate and
// checks that hashing, checking, and signing in (an unknown email as well
// as a known one) all wait for one and then fail with ErrPasswordBusy:
// an unknown email costs a slot as a known one does. It takes the
// process's gate from every other test, so it does not run in parallel.
func TestEveryHashTakesASlot(t *testing.T) {
	db := dbtest.SQLite(t)
	ctx := context.Background()
	st := NewStore(db)
	p := PasswordParams{Memory: 64, Time: 1, Threads: 1}
	h, err := HashPassword("known user's password", p)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := st.Plan(ctx, "free")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateUser(ctx, &User{Email: "known@example.com", Name: "K", PlanID: plan.ID, PasswordHash: &h}, time.Now()); err != nil {
		t.Fatal(err)
	}

	g := hashGate()
	if !g.sem.TryAcquire(g.size) {
		t.Fatal("the process's hash gate is not free")
	}
	defer g.sem.Release(g.size)
	calls := map[string]func() error{
		"HashPassword":  func() error { _, err := HashPassword("a new password", p); return err },
		"CheckPassword": func() error { _, err := CheckPassword(h, "known user's password"); return err },
		"SignIn unknown": func() error {
			_, err := st.SignIn(ctx, "nobody@example.com", "a guess at it", p)
			return err
		},
		"SignIn known": func() error {
			_, err := st.SignIn(ctx, "known@example.com", "known user's password", p)
			return err
		},
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]error{}
	for name, call := range calls {
		wg.Go(func() { // together, so that the test waits PasswordWait once
			err := call()
			mu.Lock()
			got[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	for name, err := range got {
		if !errors.Is(err, ErrPasswordBusy) {
			t.Errorf("%s with every slot taken: %v, want ErrPasswordBusy", name, err)
		}
	}
}

// TestDummyHash checks that an unknown email is checked against a hash
// with the configured parameters, so that it costs what a known one does.
func TestDummyHash(t *testing.T) {
	t.Parallel()
	for _, p := range []PasswordParams{DefaultPasswordParams(), {Memory: 64, Time: 1, Threads: 1}} {
		q, _, key, err := parseHash(dummyHash(p))
		if err != nil || q != p || len(key) != keyLen {
			t.Errorf("dummyHash(%+v) parses as %+v, %d-byte key, %v", p, q, len(key), err)
		}
	}
}
