package paper

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
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

// Account is what the account pages show of a paper account.
type Account struct {
	ID        uuid.UUID
	Number    string // e.g. "PA3KX7Q2M9ZT", as GET /v2/account shows it
	Cash      decimal.Decimal
	Currency  string
	CreatedAt time.Time // when it opened
}

// Account returns the account with the id. The error wraps
// [tradekit.ErrNotFound] when there is none.
func (b *Broker) Account(ctx context.Context, id uuid.UUID) (Account, error) {
	a, err := accountByID(ctx, b.db, id, false)
	if err != nil {
		return Account{}, err
	}
	return Account{ID: a.ID, Number: a.Number, Cash: a.Cash, Currency: a.Currency, CreatedAt: a.CreatedAt}, nil
}

// OpenClientAccount opens a paper account with the starting cash for the
// OAuth client clientID, opened at at, on db: the Broker's database or a
// transaction on it, so that an authorization server opens the account in
// the transaction that records the approval. It returns the account's id.
func (b *Broker) OpenClientAccount(ctx context.Context, db bun.IDB, clientID string, at time.Time) (uuid.UUID, error) {
	a := account{
		ID: uuid.New(), Number: accountNumber(), ClientID: clientID, Currency: b.currency,
		StartingCash: b.cash, Cash: b.cash, CreatedAt: at,
	}
	if err := insertAccount(ctx, db, &a); err != nil {
		return uuid.Nil, err
	}
	return a.ID, nil
}

// StartingCash returns the cash of a new account and its currency, as
// the consent page announces them.
func (b *Broker) StartingCash() (decimal.Decimal, string) { return b.cash, b.currency }

// Now returns the broker's current time as it stores times: UTC, to the
// microsecond, from Config.Now.
func (b *Broker) Now() time.Time { return b.clock() }

// Logger returns the logger of Config.Logger, which discards when nil.
func (b *Broker) Logger() *slog.Logger { return b.log }
