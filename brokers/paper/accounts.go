package paper

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
)

// OpenAccount opens a paper account with the starting cash, as approving
// the consent page does, but for no client: no code or token is issued,
// so nobody reaches it through the API; its orders are the fills
// [Broker.Fill] records. It is for an account whose history Tradekit
// builds itself, such as the demo data set's copy-trading leaders. id
// names the account (a random id when it is uuid.Nil), and at is when it
// opened (the current time when zero): Fill refuses fills before it. It
// returns the account's id and its number, as GET /v2/account shows them.
//
// The error wraps [tradekit.ErrConflict] when an account has the id
// already.
func (b *Broker) OpenAccount(ctx context.Context, id uuid.UUID, at time.Time) (uuid.UUID, string, error) {
	if id == uuid.Nil {
		id = uuid.New()
	}
	if at.IsZero() {
		at = b.clock()
	}
	a := account{ID: id, Number: accountNumber(), Currency: b.currency, StartingCash: b.cash, Cash: b.cash,
		CreatedAt: at.UTC().Truncate(time.Microsecond)}
	err := b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		exists, err := tx.NewSelect().Model((*account)(nil)).Where("id = ?", id).Exists(ctx)
		if err != nil {
			return fmt.Errorf("paper: open account: %w", err)
		}
		if exists {
			return fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrConflict, "account %s exists already", id))
		}
		return insertAccount(ctx, tx, &a)
	})
	if err != nil {
		return uuid.Nil, "", err
	}
	return a.ID, a.Number, nil
}
