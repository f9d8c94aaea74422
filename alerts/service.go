package alerts

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/alerts/webhook"
	"github.com/tradekit/tradekit/internal/seal"
)

// Transport sends webhook requests. [webhook.Client] is the one to use: it
// refuses destinations outside the public internet (every IANA
// special-purpose address), at every connection.
type Transport interface {
	// CheckURL returns an error wrapping tradekit.ErrInvalid when rawURL
	// may not be a webhook's destination.
	CheckURL(ctx context.Context, rawURL string) error
	// Post sends body as a JSON POST with the headers and returns the
	// response's status code.
	Post(ctx context.Context, rawURL string, header map[string]string, body []byte) (int, error)
}

// Config configures a [Service]. The zero value gives the defaults, but
// for Limits, without which every user may hold nothing.
type Config struct {
	// Now is the clock of the times written. Default time.Now.
	Now func() time.Time
	// Logger receives the failures of the background work. Default
	// slog.Default().
	Logger *slog.Logger
	// Limits returns how many watchlists and alerts the user's plan
	// allows.
	Limits func(ctx context.Context, userID uuid.UUID) (watchlists, alerts int, err error)
	// FormulaCost returns the largest static cost (formula.Expr.Cost) of
	// a condition the user's plan allows; 0 allows any. Default: any.
	FormulaCost func(ctx context.Context, userID uuid.UUID) (int, error)
	// SliceWork is the work one account's alerts may take in a turn of
	// an evaluation pass, in units of formula cost × bars (the sum, over
	// the conditions evaluated, of formula.Expr.Cost times the bars of the
	// asset). A pass evaluates in turns: in each, every account's alerts
	// are evaluated until the account has spent SliceWork, and the rest
	// wait for the next turn, so that one account's heavy conditions
	// delay only itself (see docs/alerts.md). Default [DefaultSliceWork].
	SliceWork int64
	// AccountOf returns the account of each of the users (the users of an
	// account share its turns); a user it leaves out is an account of its
	// own. Default: every user is an account of its own.
	AccountOf func(ctx context.Context, userIDs []uuid.UUID) (map[uuid.UUID]uuid.UUID, error)
	// Account returns the id of the user's account and the ids of its
	// members (the user included). The plan's counts, and MaxWebhooks,
	// cover what all the members hold together (CONTRACT: "Plan limits are
	// counted per account; invited members share them"). Default: every
	// user is an account of their own.
	Account func(ctx context.Context, userID uuid.UUID) (accountID uuid.UUID, members []uuid.UUID, err error)
	// Transport sends webhook deliveries. Default: a [webhook.Client]
	// refusing destinations outside the public internet.
	Transport Transport
	// EvaluateEvery is how often [Service.Run] looks for price changes it
	// was not told of (an import by another process on SQLite, a lost
	// notification). Default 5 s.
	EvaluateEvery time.Duration
	// DeliverEvery is how often Run looks for due deliveries and for new
	// notifications to fan out to webhooks. Default 1 s.
	DeliverEvery time.Duration
	// RetryBase is the wait after a delivery's first failed attempt; each
	// later wait doubles, up to RetryMax. Defaults 10 s and 1 h.
	RetryBase, RetryMax time.Duration
	// RetryFor is how long after its creation a delivery is retried
	// before it is marked failed. Default 24 h.
	RetryFor time.Duration
	// DeliverConcurrency is how many delivery attempts a Service runs at
	// once; a new one starts as soon as one ends. Default 16.
	DeliverConcurrency int
	// DeliverPerAccount is how many of them may be one account's, across
	// instances, whatever else is due: the rest stay free for others.
	// Default a quarter of DeliverConcurrency (at least 1). One webhook
	// has at most 2 in flight.
	DeliverPerAccount int
	// DisableAfter is how long a webhook may fail without a break
	// (every attempt to it answering other than 2xx, or not at all)
	// before it is disabled and its owner notified. Default 72 h.
	DisableAfter time.Duration
	// Observe receives measurements of evaluation passes and delivery
	// attempts, for metrics. The zero value observes nothing.
	Observe Observer
	// Sealer encrypts webhook signing secrets at rest (see
	// [Service.CreateWebhook]). Without one, no webhook can be created.
	Sealer *seal.Sealer
}

// DefaultSliceWork is the default of Config.SliceWork: 20 million units
// of formula cost × bars, a few tens of milliseconds of evaluation on
// one core.
const DefaultSliceWork = 20_000_000

// Service manages watchlists, alerts and webhooks, evaluates alerts when
// prices change and delivers notifications to webhooks. It is safe for
// concurrent use; any number of Services on one PostgreSQL database (one
// per instance) fire each alert and deliver each notification once.
type Service struct {
	db  *bun.DB
	cfg Config
	log *slog.Logger
	tr  Transport

	wakeEval    chan struct{}
	wakeDeliver chan struct{}
	passMu      sync.Mutex // one evaluation pass at a time in this process
	// tails holds, by condition, the bars an evaluation reads (see
	// tailOf), for the pass that runs: a pass clears it as it ends, so
	// that it holds at most the conditions of the active alerts.
	tails sync.Map
}

// New returns a Service on db, which must be migrated.
func New(db *bun.DB, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Limits == nil {
		cfg.Limits = func(context.Context, uuid.UUID) (int, int, error) { return 0, 0, nil }
	}
	if cfg.FormulaCost == nil {
		cfg.FormulaCost = func(context.Context, uuid.UUID) (int, error) { return 0, nil }
	}
	if cfg.SliceWork <= 0 {
		cfg.SliceWork = DefaultSliceWork
	}
	if cfg.AccountOf == nil {
		cfg.AccountOf = func(context.Context, []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) { return nil, nil }
	}
	if cfg.Account == nil {
		cfg.Account = func(_ context.Context, userID uuid.UUID) (uuid.UUID, []uuid.UUID, error) {
			return userID, []uuid.UUID{userID}, nil
		}
	}
	if cfg.Transport == nil {
		cfg.Transport = &webhook.Client{}
	}
	if cfg.EvaluateEvery <= 0 {
		cfg.EvaluateEvery = 5 * time.Second
	}
	if cfg.DeliverEvery <= 0 {
		cfg.DeliverEvery = time.Second
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 10 * time.Second
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = time.Hour
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = 24 * time.Hour
	}
	if cfg.DeliverConcurrency <= 0 {
		cfg.DeliverConcurrency = 16
	}
	if cfg.DeliverPerAccount <= 0 {
		cfg.DeliverPerAccount = max(1, cfg.DeliverConcurrency/4)
	}
	if cfg.DisableAfter <= 0 {
		cfg.DisableAfter = 72 * time.Hour
	}
	return &Service{db: db, cfg: cfg, log: cfg.Logger, tr: cfg.Transport,
		wakeEval: make(chan struct{}, 1), wakeDeliver: make(chan struct{}, 1)}
}

// clock returns the current time as stored: UTC, to the microsecond.
func (s *Service) clock() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// Wake asks [Service.Run] to evaluate alerts now, as a price change
// announced on PostgreSQL does. Call it after saving prices in this
// process on SQLite; without it, Run notices within EvaluateEvery.
func (s *Service) Wake() {
	select {
	case s.wakeEval <- struct{}{}:
	default:
	}
}

// wakeDeliveries asks Run to deliver now.
func (s *Service) wakeDeliveries() {
	select {
	case s.wakeDeliver <- struct{}{}:
	default:
	}
}

// Run evaluates alerts and delivers webhooks until ctx is done: on every
// price change announced on PostgreSQL, on [Service.Wake], and every
// EvaluateEvery as a safety net; deliveries every DeliverEvery. It first
// seals the webhook secrets stored before they were sealed (see
// [Service.SealSecrets]). It returns once that work has stopped.
func (s *Service) Run(ctx context.Context) {
	if _, err := s.SealSecrets(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("alerts: sealing webhook secrets failed", "err", err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if s.db.Dialect().Name() == dialect.PG {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.listen(ctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.runDeliveries(ctx)
	}()
	every(ctx, s.cfg.EvaluateEvery, s.wakeEval, func() {
		if _, err := s.Evaluate(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("alerts: evaluating alerts failed", "err", err)
		}
	})
}

// runDeliveries delivers until ctx is done: it keeps up to
// DeliverConcurrency attempts running, claiming the next due deliveries
// (see [Service.claimDue]) as soon as one ends, when woken, and every
// DeliverEvery, when it also fans notifications out to webhooks and
// cancels the deliveries of disabled webhooks. It returns once its
// attempts have ended.
func (s *Service) runDeliveries(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	done := make(chan struct{}, s.cfg.DeliverConcurrency) // an attempt ended
	running := 0
	t := time.NewTicker(s.cfg.DeliverEvery)
	defer t.Stop()
	housekeep := true
	for {
		if housekeep {
			if _, err := s.FanOut(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("alerts: fanning notifications out to webhooks failed", "err", err)
			}
			if err := s.cancelDisabled(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("alerts: cancelling the deliveries of disabled webhooks failed", "err", err)
			}
		}
		claimed, err := s.claimDue(ctx, s.cfg.DeliverConcurrency-running)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("alerts: claiming deliveries failed", "err", err)
		}
		for _, c := range claimed {
			running++
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.attempt(ctx, c); err != nil && ctx.Err() == nil {
					s.log.Warn("alerts: delivering a webhook failed", "delivery", c.ID, "err", err)
				}
				done <- struct{}{}
			}()
		}
		housekeep = false
		select {
		case <-ctx.Done():
			return
		case <-done:
			running--
		case <-t.C:
			housekeep = true
		case <-s.wakeDeliver:
			housekeep = true
		}
	}
}

// every runs work now, then each time period passes or wake receives,
// until ctx is done.
func every(ctx context.Context, period time.Duration, wake <-chan struct{}, work func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		work()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}
