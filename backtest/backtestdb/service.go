package backtestdb

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// ServiceConfig tunes a [Service]. The zero value gives the defaults.
type ServiceConfig struct {
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// LeaseTTL is how long the lease of a running backtest lasts unless
	// its instance renews it, which it does every third of it: an
	// instance that dies mid-run frees its account's slot after at most
	// this long. Default [DefaultLeaseTTL].
	LeaseTTL time.Duration
	// RetryAfter is the wait a run refused for the account's running
	// backtests is told to wait. Default [DefaultRetryAfter].
	RetryAfter time.Duration
}

// DefaultLeaseTTL is the default [ServiceConfig.LeaseTTL].
const DefaultLeaseTTL = 30 * time.Second

// DefaultRetryAfter is the default [ServiceConfig.RetryAfter]: a heavy
// backtest of 100 assets runs in a few seconds.
const DefaultRetryAfter = 5 * time.Second

// Service runs backtests for the users of an API within their plan's
// bounds, on every instance alike: an account keeps the results of at
// most [Owner.MaxStored] strategies and runs at most [Owner.MaxRunning]
// backtests at once.
type Service struct {
	db    *bun.DB
	md    *marketdata.Store
	store *Store
	cfg   ServiceConfig
}

// New returns a Service on db, which must be safe for concurrent
// use: [Load] reads prices on a few goroutines.
func New(db *bun.DB, cfg ServiceConfig) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	return &Service{db: db, md: marketdata.NewStore(db), store: NewStore(db), cfg: cfg}
}

// Owner is who runs a backtest and what their plan allows.
type Owner struct {
	UserID    uuid.UUID
	AccountID uuid.UUID
	// Members are the users of the account, UserID among them: their
	// results count together against MaxStored.
	Members []uuid.UUID
	// MaxStored is how many strategies' results the account keeps (the
	// plan feature backtests), and MaxRunning how many backtests it runs
	// at once (backtest_runs).
	MaxStored, MaxRunning int
}

// Request is a backtest to run: the strategy over the universe, from the
// prices Load reads with LoadConfig, with Config's money and dates.
type Request struct {
	Strategy   *backtest.Compiled
	Universe   Universe
	LoadConfig LoadConfig
	Config     backtest.Config
}

// Run runs the backtest for the owner and keeps its result, replacing
// the owner's result of the same strategy hash, and returns it.
//
// A strategy the owner keeps no result of, while the account keeps
// MaxStored, is refused with an error wrapping [tradekit.ErrForbidden]
// whose details are {"limit": "backtests", "max": MaxStored}; a rerun of
// a kept strategy is not. While the account runs MaxRunning backtests,
// on any instance, the run is refused with a [*BusyError]. Otherwise
// Run's errors are [Load]'s and [backtest.Run]'s.
func (s *Service) Run(ctx context.Context, o Owner, r Request) (Record, error) {
	hash := r.Strategy.Hash()
	// Refused before any work when the limit is reached already; checked
	// again under the account's lock when the result is saved.
	if err := s.checkStored(ctx, s.store, o, hash); err != nil {
		return Record{}, err
	}
	lease, err := s.acquire(ctx, o)
	if err != nil {
		return Record{}, err
	}
	defer s.release(ctx, lease)
	renewing, stop := context.WithCancel(ctx)
	defer stop()
	go s.renew(renewing, lease)

	loaded, err := Load(ctx, s.md, r.Universe, r.LoadConfig)
	if err != nil {
		return Record{}, err
	}
	rec, err := Run(ctx, r.Strategy, r.Universe, loaded, r.Config, o.UserID, s.cfg.Now())
	if err != nil {
		return Record{}, err
	}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := database.Lock(ctx, tx, o.AccountID); err != nil {
			return err
		}
		st := NewStore(tx)
		if err := s.checkStored(ctx, st, o, hash); err != nil {
			return err
		}
		return st.Save(ctx, &rec)
	})
	if err != nil {
		return Record{}, err
	}
	return rec, nil
}

// checkStored refuses a strategy new to the owner while the account
// keeps o.MaxStored results.
func (s *Service) checkStored(ctx context.Context, st *Store, o Owner, hash string) error {
	kept, err := st.has(ctx, o.UserID, hash)
	if err != nil || kept {
		return err
	}
	members := o.Members
	if len(members) == 0 {
		members = []uuid.UUID{o.UserID}
	}
	n, err := st.count(ctx, members)
	if err != nil {
		return err
	}
	if n >= o.MaxStored {
		return &tradekit.Error{Kind: tradekit.ErrForbidden,
			Msg: fmt.Sprintf("your plan keeps the backtests of %d strategies; delete one (DELETE /api/v1/backtests/{hash}) or move to a larger plan",
				o.MaxStored),
			Details: map[string]any{"limit": "backtests", "max": o.MaxStored}}
	}
	return nil
}

// Result returns the user's result of the strategy hash. The error wraps
// [tradekit.ErrNotFound] when there is none.
func (s *Service) Result(ctx context.Context, userID uuid.UUID, hash string) (Record, error) {
	return s.store.Result(ctx, userID, hash)
}

// Delete deletes the user's result of the strategy hash, which no longer
// counts against the plan. The error wraps [tradekit.ErrNotFound] when
// the user has none, another user's included.
func (s *Service) Delete(ctx context.Context, userID uuid.UUID, hash string) error {
	return s.store.Delete(ctx, userID, hash)
}

// BusyError is the error of a run refused because its account runs as
// many backtests as its plan allows. It wraps [tradekit.ErrRateLimited],
// with a message for the API's clients and the details {"limit":
// "backtestRuns", "max": Max}.
type BusyError struct {
	Max int
	// RetryAfter is how long to wait before trying again.
	RetryAfter time.Duration
}

// Error returns the message for the API's clients.
func (e *BusyError) Error() string { return e.kind().Msg }

// Unwrap returns a [*tradekit.Error] of kind [tradekit.ErrRateLimited].
func (e *BusyError) Unwrap() error { return e.kind() }

func (e *BusyError) kind() *tradekit.Error {
	return &tradekit.Error{Kind: tradekit.ErrRateLimited,
		Msg: fmt.Sprintf("your plan runs %d backtests at once and as many are running; retry in %s when one has finished",
			e.Max, e.RetryAfter.Round(time.Second)),
		Details: map[string]any{"limit": "backtestRuns", "max": e.Max}}
}

// runLease is a row of backtest_runs: a backtest running.
type runLease struct {
	bun.BaseModel `bun:"table:backtest_runs"`

	ID        uuid.UUID `bun:"id,pk"`
	AccountID uuid.UUID `bun:"account_id"`
	UserID    uuid.UUID `bun:"user_id"`
	ExpiresAt time.Time `bun:"expires_at"`
}

// acquire takes one of the account's o.MaxRunning slots, under the
// account's lock: the leases that have not lapsed are its runs on every
// instance. Lapsed ones are deleted. A full account is a *BusyError.
func (s *Service) acquire(ctx context.Context, o Owner) (uuid.UUID, error) {
	now := s.cfg.Now().UTC().Truncate(time.Microsecond)
	l := runLease{ID: uuid.New(), AccountID: o.AccountID, UserID: o.UserID, ExpiresAt: now.Add(s.cfg.LeaseTTL)}
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := database.Lock(ctx, tx, o.AccountID); err != nil {
			return err
		}
		_, err := tx.NewDelete().Model((*runLease)(nil)).Where("account_id = ? AND expires_at <= ?", o.AccountID, now).Exec(ctx)
		if err != nil {
			return fmt.Errorf("backtestdb: delete lapsed leases: %w", err)
		}
		n, err := tx.NewSelect().Model((*runLease)(nil)).Where("account_id = ?", o.AccountID).Count(ctx)
		if err != nil {
			return fmt.Errorf("backtestdb: count running backtests: %w", err)
		}
		if n >= o.MaxRunning {
			return &BusyError{Max: o.MaxRunning, RetryAfter: s.cfg.RetryAfter}
		}
		if _, err := tx.NewInsert().Model(&l).Exec(ctx); err != nil {
			return fmt.Errorf("backtestdb: take a lease: %w", err)
		}
		return nil
	})
	if err != nil {
		return uuid.Nil, err
	}
	return l.ID, nil
}

// renew extends the lease every third of its TTL until ctx is done. A
// renewal that fails is retried at the next tick; were every one to
// fail, the lease would lapse and let one more run in, nothing worse.
func (s *Service) renew(ctx context.Context, id uuid.UUID) {
	t := time.NewTicker(s.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = s.db.NewUpdate().Model((*runLease)(nil)).Set("expires_at = ?", s.cfg.Now().UTC().Add(s.cfg.LeaseTTL)).
				Where("id = ?", id).Exec(ctx)
		}
	}
}

// release gives the lease back, even when ctx is cancelled (the client
// went away). Were it to fail, the lease would lapse after its TTL.
func (s *Service) release(ctx context.Context, id uuid.UUID) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = s.db.NewDelete().Model((*runLease)(nil)).Where("id = ?", id).Exec(ctx)
}
