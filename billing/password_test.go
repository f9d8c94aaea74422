package billing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// cheap keeps the tests fast; the defaults cost about 0.1 s a hash.
var cheap = billing.PasswordParams{Memory: 64, Time: 1, Threads: 1}

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	const pw = "correct horse battery"
	h, err := billing.HashPassword(pw, cheap)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Errorf("hash %q is not in the PHC format with the parameters", h)
	}
	h2, _ := billing.HashPassword(pw, cheap)
	if h2 == h {
		t.Error("two hashes of one password are equal: no salt")
	}
	for _, tt := range []struct {
		pw   string
		want bool
	}{{pw, true}, {pw + " ", false}, {"Correct horse battery", false}, {"", false}} {
		if ok, err := billing.CheckPassword(h, tt.pw); err != nil || ok != tt.want {
			t.Errorf("CheckPassword(%q) = %v, %v; want %v", tt.pw, ok, err, tt.want)
		}
	}
	if billing.NeedsRehash(h, cheap) || !billing.NeedsRehash(h, billing.DefaultPasswordParams()) {
		t.Error("NeedsRehash does not compare the parameters")
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$" + strings.Repeat("A", 43),
		strings.Replace(h, "m=64", "m=0", 1), strings.Replace(h, "v=19", "v=16", 1), h[:len(h)-30]} {
		if _, err := billing.CheckPassword(bad, pw); err == nil {
			t.Errorf("CheckPassword accepted the hash %q", bad)
		}
	}
}

func TestPasswordRules(t *testing.T) {
	t.Parallel()
	for _, pw := range []string{"short", strings.Repeat("x", billing.MaxPassword+1), "twelve chars\xff"} {
		_, err := billing.HashPassword(pw, cheap)
		var pe *tradekit.ParamError
		if !errors.As(err, &pe) || pe.Param != "password" {
			t.Errorf("HashPassword(%.20q) error %v, want a ParamError for password", pw, err)
		}
	}
	if _, err := billing.HashPassword("twelve chars", cheap); err != nil {
		t.Errorf("a 12-character password: %v", err)
	}
}

func BenchmarkHashPassword(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, err := billing.HashPassword("correct horse battery", billing.DefaultPasswordParams()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSignIn checks SignIn on both databases: a right password, a wrong
// one, an unknown email and a user without a password, and the rehash of
// a hash made with other parameters.
func TestSignIn(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		u := mustUser(t, db, "Ada@Example.com", "pro")
		mustUser(t, db, "nopass@example.com", "free")
		weak := billing.PasswordParams{Memory: 32, Time: 1, Threads: 1}
		h, err := billing.HashPassword("correct horse battery", weak)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetPassword(ctx, u.ID, h); err != nil {
			t.Fatal(err)
		}
		if err := st.SetPassword(ctx, uuid.New(), h); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("SetPassword of no user: %v, want ErrNotFound", err)
		}
		got, err := st.SignIn(ctx, "ada@example.COM", "correct horse battery", cheap)
		if err != nil || got.ID != u.ID {
			t.Fatalf("SignIn = %v, %v; want user %s", got.ID, err, u.ID)
		}
		// The weak hash was replaced by one of the parameters asked for.
		again, _ := st.UserByEmail(ctx, "ada@example.com")
		if again.PasswordHash == nil || billing.NeedsRehash(*again.PasswordHash, cheap) {
			t.Errorf("after sign-in the hash is %v, want one with %+v", again.PasswordHash, cheap)
		}
		for _, c := range []struct{ email, pw string }{
			{"ada@example.com", "correct horse batterY"},
			{"nobody@example.com", "correct horse battery"},
			{"nopass@example.com", "correct horse battery"},
		} {
			if _, err := st.SignIn(ctx, c.email, c.pw, cheap); !errors.Is(err, tradekit.ErrUnauthorized) ||
				err.Error() != "billing: wrong email or password: unauthorized" {
				t.Errorf("SignIn(%s, %q) error %v, want the one unauthorized error", c.email, c.pw, err)
			}
		}
	})
}
