package billing

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
)

// KeyGrant asks [Store.GrantKey] for an API key for the user of an
// email, created when unknown.
type KeyGrant struct {
	Email string
	// Name is the name of the user when it is created.
	Name string
	// KeyName names the key, e.g. the environment it serves.
	KeyName string
	// Plan is the user's plan. Nil keeps an existing user's, and puts a
	// new user on [FreePlan].
	Plan *Plan
	// Admin makes the user an account administrator; false leaves an
	// existing user's role as it is.
	Admin bool
	Now   time.Time
}

// KeyGranted is what [Store.GrantKey] did.
type KeyGranted struct {
	User User
	// Plan is the user's plan when the user was created or updated (the
	// zero Plan otherwise).
	Plan    Plan
	Created bool // the user was created
	Updated bool // an existing user's plan or role changed
	Key     APIKey
	// Secret is the full key: stored only as a hash, it is shown once.
	Secret string
}

// GrantKey creates an API key for the user of g.Email, in one
// transaction with what it does to the user: it creates the user when
// the email is unknown, and otherwise moves the user to g.Plan and makes
// it an administrator when asked and not already so. Nothing is stored
// when any step fails.
func (s *Store) GrantKey(ctx context.Context, g KeyGrant) (KeyGranted, error) {
	var out KeyGranted
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		out = KeyGranted{}
		st := NewStore(tx)
		u, err := st.UserByEmail(ctx, g.Email)
		isNew := errors.Is(err, tradekit.ErrNotFound)
		if err != nil && !isNew {
			return err
		}
		var p Plan
		switch {
		case g.Plan != nil:
			p = *g.Plan
		case isNew:
			if p, err = st.Plan(ctx, FreePlan); err != nil {
				return err
			}
		}
		switch {
		case isNew:
			u = User{Email: g.Email, Name: g.Name, PlanID: p.ID, IsAdmin: g.Admin}
			if err := st.CreateUser(ctx, &u, g.Now); err != nil {
				return err
			}
			out.Created, out.Plan = true, p
		case (g.Plan != nil && p.ID != u.PlanID) || (g.Admin && !u.IsAdmin):
			if g.Plan != nil {
				u.PlanID = p.ID
			}
			u.IsAdmin = u.IsAdmin || g.Admin
			if err := st.UpdateUser(ctx, u); err != nil {
				return err
			}
			if g.Plan == nil {
				if p, err = st.PlanOf(ctx, u.ID); err != nil {
					return err
				}
			}
			out.Updated, out.Plan = true, p
		}
		out.User = u
		out.Key, out.Secret, err = st.CreateKey(ctx, u.ID, g.KeyName, g.Now)
		return err
	})
	if err != nil {
		return KeyGranted{}, err
	}
	return out, nil
}
