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

// TestGateBoundsConcurrency runs more hashes than a gate has slots, each
// held until the test lets it go, and checks that no more than the slots
// ran at once, and that all of them did run.
func TestGateBoundsConcurrency(t *testing.T) {
	const slots, hashes = 3, 12
	g := newGate(slots)
	var inside, most atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, hashes)
	for range hashes {
		wg.Go(func() {
			errs <- g.do(context.Background(), time.Hour, func() {
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

// TestGateGivesUp checks that a hash finding every slot taken gives up
// with ErrPasswordBusy once its wait is over, or with the context's error
// when the context ends first, without running.
func TestGateGivesUp(t *testing.T) {
	g := newGate(1)
	g.slots <- struct{}{} // a hash that does not end
	ran := false
	err := g.do(context.Background(), 0, func() { ran = true })
	if !errors.Is(err, ErrPasswordBusy) || !errors.Is(err, tradekit.ErrUnavailable) {
		t.Errorf("full gate: %v, want ErrPasswordBusy wrapping ErrUnavailable", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.do(ctx, time.Hour, func() { ran = true }); !errors.Is(err, context.Canceled) {
		t.Errorf("full gate, ended context: %v, want context.Canceled", err)
	}
	if ran {
		t.Error("a hash ran without a slot")
	}
	<-g.slots
	if err := g.do(context.Background(), 0, func() { ran = true }); err != nil || !ran {
		t.Errorf("free slot: %v, ran %v", err, ran)
	}
}

// TestEveryHashTakesASlot takes every slot of the process's gate and
// checks that hashing, checking, and signing in (an unknown email as well
// as a known one) all wait for one and then fail with ErrPasswordBusy:
// an unknown email costs a slot as a known one does.
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
	for range cap(g.slots) {
		g.slots <- struct{}{}
	}
	defer func() {
		for range cap(g.slots) {
			<-g.slots
		}
	}()
	calls := map[string]func() error{
		"HashPassword": func() error { _, err := HashPassword("a new password", p); return err },
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
	for _, p := range []PasswordParams{DefaultPasswordParams(), {Memory: 64, Time: 1, Threads: 1}} {
		q, _, key, err := parseHash(dummyHash(p))
		if err != nil || q != p || len(key) != keyLen {
			t.Errorf("dummyHash(%+v) parses as %+v, %d-byte key, %v", p, q, len(key), err)
		}
	}
}
