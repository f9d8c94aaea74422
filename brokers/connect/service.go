package connect

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/marketdata"
)

// Provider is a broker Tradekit connects to: an OAuth 2.0 client
// registration there and the base of its Alpaca-dialect trading API.
type Provider struct {
	Name      string         // the API's provider value, e.g. "paper"
	OAuth     *oauth2.Config // client id and secret, the broker's endpoints, Tradekit's callback URL
	APIURL    string         // the trading API's base, before /v2
	RevokeURL string         // the broker's RFC 7009 revocation endpoint; "" when it has none
	// SendLoginHint sends the user's email (Config.UserEmail) as the
	// authorization request's login_hint, so that the broker's consent
	// page names the Tradekit user being linked. Only for brokers meant
	// to see it, such as Tradekit's own paper broker.
	SendLoginHint bool
	// CanShort reports that the broker's accounts may sell what they do
	// not hold; when false, a sell beyond the held quantity fails the
	// check ([brokers.RuleHeldQuantity]) before the broker is called.
	CanShort bool
}

// Config configures a [Service]. Providers is required; zero values of
// the rest give the defaults.
type Config struct {
	Providers []Provider
	// Sealer encrypts tokens at rest. Without one, connecting fails with
	// an error saying TRADEKIT_SECRET_KEY is needed.
	Sealer *Sealer
	// PortfolioLimit returns how many portfolios, thus active
	// connections, the user's plan allows. Required.
	PortfolioLimit func(ctx context.Context, userID uuid.UUID) (int, error)
	// Account returns the id of the user's account and the ids of its
	// members (the user included): the plan's portfolios count the
	// active connections of all of them together. Default: every user is
	// an account of their own.
	Account func(ctx context.Context, userID uuid.UUID) (accountID uuid.UUID, members []uuid.UUID, err error)
	// Unavailable names providers this server could offer once configured,
	// with what to configure, e.g. {"alpaca": "set TRADEKIT_ALPACA_CLIENT_ID
	// and TRADEKIT_ALPACA_CLIENT_SECRET"}.
	Unavailable map[string]string
	// HTTPClient reaches the brokers. Default: a client with a 30 s
	// timeout that keeps up to 64 idle connections per broker host, so
	// that concurrent orders, order reads and syncs of many users reuse
	// their connections instead of dialling again (Go's default keeps 2).
	HTTPClient *http.Client
	// StateTTL is how long a pending connection's OAuth state stays valid.
	// Default 10 minutes.
	StateTTL time.Duration
	// SyncInterval is how often active connections are synced. Default 15
	// minutes; negative turns scheduled syncs off.
	SyncInterval time.Duration
	// SyncTimeout bounds one sync; a sync still marked syncing after it
	// (its instance stopped) is failed. Default 2 minutes.
	SyncTimeout time.Duration
	// OrderInterval is how often the order tracker looks for pending
	// orders due a read from their broker (see [Service.TrackOrders]).
	// Default 200 ms; negative turns the tracker off.
	OrderInterval time.Duration
	// Trader, when set, returns the broker client of a connection in
	// place of Alpaca's dialect over HTTP (package brokers/alpaca): a
	// broker of another dialect, or a fake in tests. tok is the
	// connection's current token.
	Trader func(p Provider, c *Connection, tok *oauth2.Token) brokers.Trader
	// SlippageBps is the slippage, in basis points of the latest close, at
	// which a market order reserves exposure while it is open. Default 0.
	SlippageBps decimal.Decimal
	// PriceVersion returns an asset's price version, which changes with
	// its prices: the guardrails' quotes (latest close, ATR(14)) are
	// computed once per version. Default: read from the database
	// ([marketdata.Store.PriceVersion]); a server passes its
	// [marketdata.Versions], which answers from memory on PostgreSQL.
	PriceVersion func(ctx context.Context, assetID uuid.UUID) (marketdata.PriceVersion, error)
	// OnFill, when set, is called with a portfolio's id after a fill is
	// recorded in it (by the order tracker or a sync), once the recording
	// transaction has committed: the copy engine's wake-up in this
	// process. Other instances learn of it on PostgreSQL's [FillsChannel].
	OnFill func(portfolioID uuid.UUID)
	// UserEmail returns the email of the user with the given id: the
	// login_hint of the providers with SendLoginHint. Nil sends none.
	UserEmail func(ctx context.Context, userID uuid.UUID) (string, error)
	Now       func() time.Time
	Logger    *slog.Logger
	// Observe receives measurements of order placements, guardrail
	// rejections and syncs, for metrics. The zero value observes nothing.
	Observe Observer
}

// Service runs broker connections: the OAuth flow, token storage, syncs
// and portfolios. It is safe for concurrent use, and several instances on
// one database behave as one: every state lives in the database.
type Service struct {
	db      *bun.DB
	cfg     Config
	byName  map[string]Provider
	wg      sync.WaitGroup     // background syncs
	quotes  *quotes            // the guardrails' latest closes and ATRs, per price version
	pulling singleflight.Group // first pulls of connections without a ledger, by id
}

// New returns a Service on db, which must be migrated.
func New(db *bun.DB, cfg Config) *Service {
	if cfg.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: t}
	}
	if cfg.Account == nil {
		cfg.Account = func(_ context.Context, userID uuid.UUID) (uuid.UUID, []uuid.UUID, error) {
			return userID, []uuid.UUID{userID}, nil
		}
	}
	if cfg.StateTTL <= 0 {
		cfg.StateTTL = 10 * time.Minute
	}
	if cfg.SyncInterval == 0 {
		cfg.SyncInterval = 15 * time.Minute
	}
	if cfg.SyncTimeout <= 0 {
		cfg.SyncTimeout = 2 * time.Minute
	}
	if cfg.OrderInterval == 0 {
		cfg.OrderInterval = minCheck
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PriceVersion == nil {
		cfg.PriceVersion = marketdata.NewStore(db).PriceVersion
	}
	s := &Service{db: db, cfg: cfg, byName: make(map[string]Provider),
		quotes: &quotes{version: cfg.PriceVersion, m: make(map[uuid.UUID]quote)}}
	for _, p := range cfg.Providers {
		s.byName[p.Name] = p
	}
	return s
}

// Providers returns the names of the providers this server accepts.
func (s *Service) Providers() []string {
	names := make([]string, 0, len(s.cfg.Providers))
	for _, p := range s.cfg.Providers {
		names = append(names, p.Name)
	}
	return names
}

// provider returns the named provider, or a 400 naming "provider".
func (s *Service) provider(name string) (Provider, error) {
	if p, ok := s.byName[name]; ok {
		return p, nil
	}
	if how, ok := s.cfg.Unavailable[name]; ok {
		return Provider{}, &tradekit.ParamError{Param: "provider", Msg: fmt.Sprintf("%s is not configured on this server: %s", name, how)}
	}
	return Provider{}, &tradekit.ParamError{Param: "provider",
		Msg: fmt.Sprintf("unknown provider %s; this server accepts %v", tradekit.Quote(name), s.Providers())}
}

// NeedSecretKey is why no provider can be connected on a server without a
// [Sealer]: the message of the 503 that connecting answers there, and the
// reason the providers list gives.
const NeedSecretKey = "broker connections need TRADEKIT_SECRET_KEY (base64 of 32 random bytes) on this server, to encrypt broker tokens"

// CanConnect reports whether connections can be made on this server at
// all: false without a [Sealer] (Config.Sealer), when [Service.Connect]
// answers an error wrapping [tradekit.ErrUnavailable] with
// [NeedSecretKey].
func (s *Service) CanConnect() bool { return s.cfg.Sealer != nil }

// sealer returns the Sealer, or an error saying how to configure one.
func (s *Service) sealer() (*Sealer, error) {
	if s.cfg.Sealer == nil {
		return nil, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrUnavailable, NeedSecretKey))
	}
	return s.cfg.Sealer, nil
}

// Run syncs the active connections every SyncInterval, fails the syncs
// orphaned by a stopped instance, and tracks pending orders every
// OrderInterval, until ctx is done; then it waits for the syncs it
// started.
func (s *Service) Run(ctx context.Context) {
	defer s.wg.Wait()
	tick := time.Minute
	if s.cfg.SyncInterval > 0 && s.cfg.SyncInterval < tick {
		tick = s.cfg.SyncInterval
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var orders <-chan time.Time // nil, never ready, when the tracker is off
	if s.cfg.OrderInterval > 0 {
		ot := time.NewTicker(s.cfg.OrderInterval)
		defer ot.Stop()
		orders = ot.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("scheduled broker syncs failed", "err", err)
			}
		case <-orders:
			if _, err := s.TrackOrders(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("tracking orders failed", "err", err)
			}
		}
	}
}

// Tick does one round of [Service.Run]: it fails orphaned syncs and
// starts a sync of every active connection not synced for SyncInterval.
func (s *Service) Tick(ctx context.Context) error {
	now := s.cfg.Now().UTC()
	if err := s.reap(ctx, now); err != nil {
		return err
	}
	if s.cfg.SyncInterval < 0 {
		return nil
	}
	var due []Connection
	err := s.db.NewSelect().Model(&due).Where("status = ?", Active).
		Where("(last_sync_at IS NULL OR last_sync_at < ?)", now.Add(-s.cfg.SyncInterval)).
		Where("(sync_status <> ? OR sync_started_at < ?)", Syncing, now.Add(-s.cfg.SyncTimeout)).
		Order("last_sync_at").Limit(50).Scan(ctx)
	if err != nil {
		return fmt.Errorf("connect: due connections: %w", err)
	}
	for _, c := range due {
		if _, err := s.StartSync(ctx, c.UserID, c.ID); err != nil {
			s.cfg.Logger.Warn("a scheduled broker sync did not start", "connection_id", c.ID, "err", err)
		}
	}
	return nil
}

// reap fails the syncs still marked syncing SyncTimeout after they began:
// the instance that ran them stopped.
func (s *Service) reap(ctx context.Context, now time.Time) error {
	before := now.Add(-s.cfg.SyncTimeout)
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		msg := "the sync was interrupted (the server running it stopped); the next sync will try again"
		_, err := tx.NewUpdate().Model((*SyncLog)(nil)).Set("status = ?, error = ?, completed_at = ?", Failed, msg, now).
			Where("status = ? AND started_at < ?", Syncing, before).Exec(ctx)
		if err != nil {
			return fmt.Errorf("connect: fail orphaned syncs: %w", err)
		}
		_, err = tx.NewUpdate().Model((*Connection)(nil)).Set("sync_status = ?, last_error = ?", Failed, msg).
			Where("sync_status = ? AND sync_started_at < ?", Syncing, before).Exec(ctx)
		if err != nil {
			return fmt.Errorf("connect: fail orphaned syncs: %w", err)
		}
		return nil
	})
}

// Wait waits for the syncs this Service started.
func (s *Service) Wait() { s.wg.Wait() }
