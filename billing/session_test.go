package billing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestSessions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		u := mustUser(t, db, "session@example.com", "free")
		now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		token, se, err := st.CreateSession(ctx, u.ID, now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(token) != 43 || len(se.CSRFToken) != 43 || se.TokenHash == token {
			t.Fatalf("token %q, csrf %q, stored %q", token, se.CSRFToken, se.TokenHash)
		}
		got, gu, err := st.Session(ctx, token, now.Add(59*time.Minute))
		if err != nil || gu.ID != u.ID || got.CSRFToken != se.CSRFToken || !got.ExpiresAt.Equal(now.Add(time.Hour)) {
			t.Fatalf("Session = %+v, %v, %v", got, gu.ID, err)
		}
		// A token that differs from the real one in its first character,
		// whatever that character is.
		other := "x" + token[1:]
		if token[0] == 'x' {
			other = "y" + token[1:]
		}
		for name, c := range map[string]struct {
			token string
			at    time.Time
		}{
			"expired":         {token, now.Add(time.Hour)},
			"unknown":         {other, now},
			"the stored hash": {se.TokenHash, now},
		} {
			if _, _, err := st.Session(ctx, c.token, c.at); !errors.Is(err, tradekit.ErrUnauthorized) {
				t.Errorf("%s: %v, want ErrUnauthorized", name, err)
			}
		}
		if n, err := st.DeleteExpiredSessions(ctx, now.Add(2*time.Hour)); err != nil || n != 1 {
			t.Errorf("DeleteExpiredSessions = %d, %v; want 1", n, err)
		}
		token, _, _ = st.CreateSession(ctx, u.ID, now, time.Hour)
		if err := st.DeleteSession(ctx, token); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Session(ctx, token, now); !errors.Is(err, tradekit.ErrUnauthorized) {
			t.Errorf("after sign-out: %v", err)
		}
		if err := st.DeleteSession(ctx, token); err != nil {
			t.Errorf("signing out twice: %v", err)
		}
	})
}

// TestSignInThrottle checks the lockout of an (email, address) pair: it
// holds for the pair until its oldest failure leaves the window, and
// never for the same email from another address nor for another email.
func TestSignInThrottle(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		th := billing.SignInThrottle{Failures: 3, Window: 10 * time.Minute}
		const attacker, user = "203.0.113.7", "198.51.100.2"
		t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		for i := range 3 {
			if limited, _, err := st.SignInThrottled(ctx, "Eve@example.com", attacker, t0.Add(time.Duration(i)*time.Minute), th); err != nil || limited {
				t.Fatalf("failure %d: throttled %v, %v", i, limited, err)
			}
			if err := st.RecordSignInFailure(ctx, "eve@EXAMPLE.com", attacker, t0.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		limited, until, err := st.SignInThrottled(ctx, "eve@example.com", attacker, t0.Add(3*time.Minute), th)
		if err != nil || !limited || !until.Equal(t0.Add(10*time.Minute)) {
			t.Errorf("after 3 failures: throttled %v until %v, %v; want until %v", limited, until, err, t0.Add(10*time.Minute))
		}
		if limited, _, _ := st.SignInThrottled(ctx, "eve@example.com", user, t0.Add(3*time.Minute), th); limited {
			t.Error("the email is locked out at another address")
		}
		if limited, _, _ := st.SignInThrottled(ctx, "other@example.com", attacker, t0.Add(3*time.Minute), th); limited {
			t.Error("another email is throttled at the address, which has no address bound")
		}
		if limited, _, _ := st.SignInThrottled(ctx, "eve@example.com", attacker, t0.Add(10*time.Minute+time.Second), th); limited {
			t.Error("still throttled once the first failure left the window")
		}
	})
}

// TestSignInAddressThrottle checks the bound on one address's failures
// spread over many emails: the address is refused for every email, and
// other addresses are not.
func TestSignInAddressThrottle(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		th := billing.SignInThrottle{Failures: 3, Window: 10 * time.Minute, AddressFailures: 4}
		const sprayer, user = "2001:db8:1:2::/64", "198.51.100.2"
		t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		for i := range 4 {
			email := fmt.Sprintf("user%d@example.com", i)
			if limited, _, err := st.SignInThrottled(ctx, email, sprayer, t0.Add(time.Duration(i)*time.Minute), th); err != nil || limited {
				t.Fatalf("failure %d: throttled %v, %v", i, limited, err)
			}
			if err := st.RecordSignInFailure(ctx, email, sprayer, t0.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		limited, until, err := st.SignInThrottled(ctx, "fresh@example.com", sprayer, t0.Add(4*time.Minute), th)
		if err != nil || !limited || !until.Equal(t0.Add(10*time.Minute)) {
			t.Errorf("after 4 failures from the address: throttled %v until %v, %v; want until %v", limited, until, err, t0.Add(10*time.Minute))
		}
		for _, email := range []string{"fresh@example.com", "user0@example.com"} {
			if limited, _, _ := st.SignInThrottled(ctx, email, user, t0.Add(4*time.Minute), th); limited {
				t.Errorf("%s is throttled at another address", email)
			}
		}
	})
}
