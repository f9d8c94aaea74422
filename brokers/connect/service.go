package connect

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
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
	db     *bun.DB
	cfg    Config
	byName map[string]Provider
	wg     sync.WaitGroup // background syncs
	// placing serialises the order placements of the users whose ids end
	// in the same byte modulo its length (see [Service.PlaceOrder]).
	placing [64]sync.Mutex
	quotes  *quotes            // the guardrails' latest closes and ATRs, per price version
	pulling singleflight.Group // first pulls of connections without a ledger, by id
}

// NewService returns a Service on db, which must be migrated.
func NewService(db *bun.DB, cfg Config) *Service {
	if cfg.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: t}
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

// sealer returns the Sealer, or an error saying how to configure one.
func (s *Service) sealer() (*Sealer, error) {
	if s.cfg.Sealer == nil {
		return nil, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrUnavailable,
			"broker connections need TRADEKIT_SECRET_KEY (base64 of 32 random bytes) on this server, to encrypt broker tokens"))
	}
	return s.cfg.Sealer, nil
}

// Connect starts a connection of the user to provider: it stores the
// connection pending with a single-use OAuth state and returns it with
// the URL at the broker where the user authorizes it, with a PKCE S256
// challenge (and the user's email as login_hint for a provider with
// SendLoginHint). redirectURL, where
// the user's browser returns afterwards, must be an absolute http(s) URL.
// A user with as many active connections as Config.PortfolioLimit allows
// gets an error wrapping [tradekit.ErrForbidden] with details
// {"limit": "portfolios"}.
func (s *Service) Connect(ctx context.Context, userID uuid.UUID, provider, redirectURL string) (Connection, string, error) {
	p, err := s.provider(provider)
	if err != nil {
		return Connection{}, "", err
	}
	if err := checkRedirect(redirectURL); err != nil {
		return Connection{}, "", err
	}
	sealer, err := s.sealer()
	if err != nil {
		return Connection{}, "", err
	}
	if err := s.checkLimit(ctx, userID); err != nil {
		return Connection{}, "", err
	}
	opts, err := s.authOptions(ctx, p, userID)
	if err != nil {
		return Connection{}, "", err
	}
	now := s.cfg.Now().UTC()
	c := Connection{ID: uuid.New(), UserID: userID, Provider: p.Name, Status: Pending, RedirectURL: redirectURL,
		CreatedAt: now, UpdatedAt: now}
	state, verifier := randomToken(), oauth2.GenerateVerifier()
	st := oauthState{StateHash: hashToken(state), ConnectionID: c.ID, CodeVerifier: sealer.Seal(verifier, "verifier:"+c.ID.String()),
		ExpiresAt: now.Add(s.cfg.StateTTL)}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := NewStore(tx).InsertConnection(ctx, &c); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(&st).Exec(ctx); err != nil {
			return fmt.Errorf("connect: insert state: %w", err)
		}
		return nil
	})
	if err != nil {
		return Connection{}, "", err
	}
	return c, p.OAuth.AuthCodeURL(state, append(opts, oauth2.S256ChallengeOption(verifier))...), nil
}

// authOptions returns the parameters the authorization URL of p carries
// beyond the state and the PKCE challenge: the user's login_hint, when p
// asks for it.
func (s *Service) authOptions(ctx context.Context, p Provider, userID uuid.UUID) ([]oauth2.AuthCodeOption, error) {
	if !p.SendLoginHint || s.cfg.UserEmail == nil {
		return nil, nil
	}
	email, err := s.cfg.UserEmail(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("connect: the email of user %s: %w", userID, err)
	}
	return []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("login_hint", email)}, nil
}

// checkLimit returns a 403 when the user already has as many active
// connections as the plan allows portfolios.
func (s *Service) checkLimit(ctx context.Context, userID uuid.UUID) error {
	maxPortfolios, err := s.cfg.PortfolioLimit(ctx, userID)
	if err != nil {
		return err
	}
	n, err := NewStore(s.db).CountActive(ctx, userID)
	if err != nil {
		return err
	}
	if n >= maxPortfolios {
		return fmt.Errorf("connect: %w", &tradekit.Error{Kind: tradekit.ErrForbidden,
			Msg: fmt.Sprintf("your plan allows %d portfolios and each connected account is one; "+
				"disconnect one or move to a larger plan", maxPortfolios),
			Details: map[string]any{"limit": "portfolios", "max": maxPortfolios}})
	}
	return nil
}

// checkRedirect returns a 400 naming redirectUrl unless u is an absolute
// http or https URL.
func checkRedirect(u string) error {
	if u == "" {
		return &tradekit.ParamError{Param: "redirectUrl", Msg: "is required: the URL the user's browser returns to after authorizing"}
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil || len(u) > 2048 {
		return &tradekit.ParamError{Param: "redirectUrl", Msg: "must be an absolute http or https URL without credentials, got " + tradekit.Quote(u)}
	}
	return nil
}

// Callback completes the authorization the broker redirected back with:
// state and code, or errCode (and errDesc) when the user denied or the
// broker failed. It returns where to send the user's browser: the
// connection's redirect URL with connectionId and status, or error. An
// unknown or already used state changes nothing and is an error wrapping
// [tradekit.ErrNotFound]; a state past its time fails the connection's
// authorization.
func (s *Service) Callback(ctx context.Context, state, code, errCode, errDesc string) (string, error) {
	now := s.cfg.Now().UTC()
	if state == "" {
		return "", &tradekit.ParamError{Param: "state", Msg: "is required"}
	}
	st, err := NewStore(s.db).takeState(ctx, hashToken(state), now)
	if err != nil {
		return "", err
	}
	c, err := NewStore(s.db).connection(ctx, st.ConnectionID)
	if err != nil {
		return "", err
	}
	fail := func(reason, public string) (string, error) {
		s.cfg.Logger.Warn("broker authorization failed", "connection_id", c.ID, "provider", c.Provider, "reason", reason)
		c.LastError, c.UpdatedAt = public, now
		if err := NewStore(s.db).updateConnection(ctx, &c, "last_error", "updated_at"); err != nil {
			return "", err
		}
		return withQuery(c.RedirectURL, "connectionId", c.ID.String(), "status", c.Status, "error", public), nil
	}
	switch {
	case c.Status != Pending:
		return fail("connection not pending", "the connection is "+c.Status)
	case now.After(st.ExpiresAt):
		return fail("state expired", "the authorization took longer than "+s.cfg.StateTTL.String()+"; connect again")
	case errCode != "":
		return fail(errCode+": "+errDesc, "the broker did not authorize the connection: "+errCode)
	case code == "":
		return fail("no code", "the broker sent no authorization code")
	}
	p, err := s.provider(c.Provider)
	if err != nil {
		return fail(err.Error(), "the provider is no longer configured on this server")
	}
	sealer, err := s.sealer()
	if err != nil {
		return "", err
	}
	verifier, err := sealer.Open(st.CodeVerifier, "verifier:"+c.ID.String())
	if err != nil {
		return "", err
	}
	tok, err := p.OAuth.Exchange(context.WithValue(ctx, oauth2.HTTPClient, s.cfg.HTTPClient), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return fail("code exchange: "+err.Error(), "the broker refused the authorization code")
	}
	acct, err := s.client(p, &c, tok, sealer).Account(ctx)
	if err != nil {
		return fail("read account: "+err.Error(), "the broker's account could not be read")
	}
	// The limit is checked again: two authorizations may have raced.
	if err := s.checkLimit(ctx, c.UserID); err != nil {
		if !errors.Is(err, tradekit.ErrForbidden) {
			return "", err
		}
		return fail("portfolio limit", "your plan's portfolio limit is reached")
	}
	c.Status, c.AccountID, c.AccountName, c.LastError, c.UpdatedAt = Active, acct.ID, acct.Number, "", now
	sealTokens(sealer, &c, tok)
	if err := NewStore(s.db).updateConnection(ctx, &c, "status", "account_id", "account_name", "last_error", "updated_at",
		"access_token", "refresh_token", "token_expiry"); err != nil {
		return "", err
	}
	// The first sync starts at once, so that the portfolio is there
	// within moments of connecting, not at the next scheduled round.
	if _, err := s.StartSync(ctx, c.UserID, c.ID); err != nil {
		s.cfg.Logger.Warn("the first sync of a new connection did not start", "connection_id", c.ID, "err", err)
	}
	return withQuery(c.RedirectURL, "connectionId", c.ID.String(), "status", c.Status), nil
}

// sealTokens stores tok in c, sealed.
func sealTokens(sealer *Sealer, c *Connection, tok *oauth2.Token) {
	at := sealer.Seal(tok.AccessToken, "access:"+c.ID.String())
	c.AccessToken = &at
	c.RefreshToken = nil
	if tok.RefreshToken != "" {
		rt := sealer.Seal(tok.RefreshToken, "refresh:"+c.ID.String())
		c.RefreshToken = &rt
	}
	c.TokenExpiry = nil
	if !tok.Expiry.IsZero() {
		e := tok.Expiry.UTC()
		c.TokenExpiry = &e
	}
}

// openTokens returns c's tokens, opened.
func openTokens(sealer *Sealer, c *Connection) (*oauth2.Token, error) {
	if c.AccessToken == nil {
		return nil, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict, "the connection holds no broker authorization"))
	}
	tok := &oauth2.Token{TokenType: "Bearer"}
	var err error
	if tok.AccessToken, err = sealer.Open(*c.AccessToken, "access:"+c.ID.String()); err != nil {
		return nil, err
	}
	if c.RefreshToken != nil {
		if tok.RefreshToken, err = sealer.Open(*c.RefreshToken, "refresh:"+c.ID.String()); err != nil {
			return nil, err
		}
	}
	if c.TokenExpiry != nil {
		tok.Expiry = *c.TokenExpiry
	}
	return tok, nil
}

// client returns the broker client of c, which stores refreshed tokens.
func (s *Service) client(p Provider, c *Connection, tok *oauth2.Token, sealer *Sealer) brokers.Trader {
	if s.cfg.Trader != nil {
		return s.cfg.Trader(p, c, tok)
	}
	return alpaca.New(alpaca.Config{BaseURL: p.APIURL, OAuth: p.OAuth, Token: tok, HTTPClient: s.cfg.HTTPClient,
		OnToken: func(ctx context.Context, t *oauth2.Token) error {
			if c.Status != Active {
				return nil // stored when the connection becomes active
			}
			sealTokens(sealer, c, t)
			c.UpdatedAt = s.cfg.Now().UTC()
			return NewStore(s.db).updateConnection(ctx, c, "access_token", "refresh_token", "token_expiry", "updated_at")
		}})
}

// Disconnect ends the user's connection id: it revokes the tokens at the
// broker where the broker supports it (a failure there is logged, not
// fatal), forgets them and marks the connection disconnected, keeping
// the row and its portfolio for history. Disconnecting a disconnected
// connection changes nothing.
func (s *Service) Disconnect(ctx context.Context, userID, id uuid.UUID) (Connection, error) {
	st := NewStore(s.db)
	c, err := st.Connection(ctx, userID, id)
	if err != nil || c.Status == Disconnected {
		return c, err
	}
	if p, ok := s.byName[c.Provider]; ok && p.RevokeURL != "" && s.cfg.Sealer != nil && c.AccessToken != nil {
		if tok, err := openTokens(s.cfg.Sealer, &c); err == nil {
			for _, t := range []string{tok.RefreshToken, tok.AccessToken} {
				if t == "" {
					continue
				}
				if err := alpaca.Revoke(ctx, s.cfg.HTTPClient, p.RevokeURL, p.OAuth.ClientID, p.OAuth.ClientSecret, t); err != nil {
					s.cfg.Logger.Warn("revoking a broker token failed", "connection_id", c.ID, "err", err)
				}
			}
		}
	}
	c.Status, c.AccessToken, c.RefreshToken, c.TokenExpiry, c.UpdatedAt = Disconnected, nil, nil, nil, s.cfg.Now().UTC()
	if err := st.updateConnection(ctx, &c, "status", "access_token", "refresh_token", "token_expiry", "updated_at"); err != nil {
		return Connection{}, err
	}
	return c, nil
}

// StartSync starts a sync of the user's connection id in the background
// and returns its log entry, status syncing. When a sync of it already
// runs, it returns that one. Syncing a pending or disconnected connection
// is an error wrapping [tradekit.ErrConflict].
func (s *Service) StartSync(ctx context.Context, userID, id uuid.UUID) (SyncLog, error) {
	st := NewStore(s.db)
	c, err := st.Connection(ctx, userID, id)
	if err != nil {
		return SyncLog{}, err
	}
	if c.Status != Active {
		return SyncLog{}, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict,
			"the connection is %s: only an active connection syncs", c.Status))
	}
	log, started, err := s.claim(ctx, c)
	if err != nil || !started {
		return log, err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.runSync(context.WithoutCancel(ctx), c.ID, log)
	}()
	return log, nil
}

// claim marks c syncing and writes the log entry of a new sync; when a
// sync of c already runs it returns that one, started false.
func (s *Service) claim(ctx context.Context, c Connection) (log SyncLog, started bool, err error) {
	now := s.cfg.Now().UTC()
	log = SyncLog{ID: uuid.New(), ConnectionID: c.ID, Status: Syncing, StartedAt: now}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ok, err := NewStore(tx).claimSync(ctx, c.ID, log.ID, now, s.cfg.SyncTimeout)
		if err != nil || !ok {
			return err
		}
		started = true
		if _, err := tx.NewInsert().Model(&log).Exec(ctx); err != nil {
			return fmt.Errorf("connect: insert sync log: %w", err)
		}
		return nil
	})
	if err != nil || started {
		return log, started, err
	}
	// Another sync runs: answer with it.
	cur, err := NewStore(s.db).connection(ctx, c.ID)
	if err != nil {
		return SyncLog{}, false, err
	}
	if cur.SyncID == nil || cur.Status != Active {
		return SyncLog{}, false, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict, "the connection is %s", cur.Status))
	}
	err = s.db.NewSelect().Model(&log).Where("id = ?", *cur.SyncID).Scan(ctx)
	if err != nil {
		return SyncLog{}, false, fmt.Errorf("connect: running sync: %w", err)
	}
	return log, false, nil
}

// runSync pulls the account into the connection's portfolio and closes
// the log entry, completed or failed.
func (s *Service) runSync(ctx context.Context, id uuid.UUID, log SyncLog) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.SyncTimeout-5*time.Second)
	defer cancel()
	start := time.Now()
	n, err := s.pull(ctx, id)
	s.cfg.Observe.synced(start, err)
	now := s.cfg.Now().UTC()
	log.CompletedAt = &now
	c := Connection{ID: id, SyncStatus: Completed, UpdatedAt: now}
	columns := []string{"sync_status", "last_error", "updated_at"}
	if err != nil {
		log.Status, log.Error = Failed, publicSyncError(err)
		c.SyncStatus, c.LastError = Failed, log.Error
		s.cfg.Logger.Warn("broker sync failed", "connection_id", id, "sync_id", log.ID, "err", err)
	} else {
		log.Status, log.PositionsSynced = Completed, &n
		c.LastSyncAt = &now
		columns = append(columns, "last_sync_at")
	}
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer wcancel()
	err = s.db.RunInTx(wctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model(&log).Column("status", "positions_synced", "error", "completed_at").WherePK().Exec(ctx); err != nil {
			return err
		}
		// Only the sync that holds the connection closes it.
		_, err := tx.NewUpdate().Model(&c).Column(columns...).WherePK().Where("sync_id = ?", log.ID).Exec(ctx)
		return err
	})
	if err != nil {
		s.cfg.Logger.Error("recording a broker sync failed", "connection_id", id, "sync_id", log.ID, "err", err)
	}
}

// publicSyncError is what a failed sync's log tells the user.
func publicSyncError(err error) string {
	var te *tradekit.Error
	switch {
	case errors.As(err, &te):
		return te.Msg
	case errors.Is(err, tradekit.ErrUnauthorized):
		return "the broker no longer accepts this connection's authorization: disconnect and connect again"
	case errors.Is(err, tradekit.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return "the broker could not be reached or failed; the next sync will try again"
	}
	return "the sync failed on the server; the next sync will try again"
}

// pull reads the account, positions, recent fills and daily equity of
// connection id into its portfolio and returns the number of positions.
//
// It reconciles the ledger with the broker: the portfolio's cash and
// positions become the broker's, and each open order's share of them
// (its fills so far) is noted, so that its later fills are applied once.
// The differences the ledger had are logged and kept on the connection.
// The broker answers in several requests, so the open orders are read
// before and after the account and positions, and the whole read again
// while they moved (at most three times). When a fill was applied to the
// ledger while the broker was being read, the ledger is left as it is for
// the next sync; the fills and the equity history are saved either way.
func (s *Service) pull(ctx context.Context, id uuid.UUID) (int, error) {
	st := NewStore(s.db)
	c, err := st.connection(ctx, id)
	if err != nil {
		return 0, err
	}
	tr, err := s.traderOf(&c)
	if err != nil {
		return 0, err
	}
	version := int64(-1) // no ledger yet
	var cur Portfolio
	if err := s.db.NewSelect().Model(&cur).Column("version").Where("connection_id = ?", c.ID).Scan(ctx); err == nil {
		version = cur.Version
	} else if !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("connect: the ledger of %s: %w", c.ID, err)
	}
	var open []Order
	err = s.db.NewSelect().Model(&open).Where("connection_id = ? AND status = ?", c.ID, brokers.Pending).Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: open orders of %s: %w", c.ID, err)
	}
	acct, positions, states, consistent, err := snapshot(ctx, tr, func(ctx context.Context) (map[uuid.UUID]brokers.OrderState, error) {
		return orderStates(ctx, tr, open)
	})
	if err != nil {
		return 0, err
	}
	after, err := st.lastFill(ctx, c.ID)
	if err != nil {
		return 0, err
	}
	if after.IsZero() {
		after = s.cfg.Now().AddDate(-1, 0, 0)
	} else {
		// The broker filters orders by when they were submitted: look a
		// month behind the last fill, so an order submitted before it
		// and filled since is not missed. Fills already held are kept
		// once (by the broker's id).
		after = after.AddDate(0, -1, 0)
	}
	fills, err := tr.Fills(ctx, after)
	if err != nil {
		return 0, err
	}
	history, err := tr.History(ctx)
	if err != nil {
		return 0, err
	}
	now := s.now()
	pf := Portfolio{ID: uuid.New(), UserID: c.UserID, ConnectionID: c.ID, Currency: acct.Currency, Cash: acct.Cash,
		Equity: acct.Equity, UpdatedAt: now}
	md := marketdata.NewStore(s.db)
	for _, x := range positions {
		pos := Position{Symbol: x.Symbol, Quantity: x.Quantity, AverageCost: x.AvgEntryPrice}
		if !x.MarketValue.IsZero() || !x.Quantity.IsZero() {
			v := x.MarketValue
			pos.BrokerValue = &v
		}
		if a, err := md.AssetBySymbol(ctx, x.Symbol); err == nil {
			pos.AssetID = &a.ID
		} else if !errors.Is(err, tradekit.ErrNotFound) {
			return 0, err
		}
		pf.Positions = append(pf.Positions, pos)
	}
	fs := make([]Fill, len(fills))
	for i, f := range fills {
		fs[i] = Fill{BrokerID: f.ID, Symbol: f.Symbol, Side: string(f.Side), Quantity: f.Quantity, Price: f.Price, FilledAt: f.Time.UTC()}
	}
	hs := make([]EquityPoint, 0, len(history))
	for _, h := range history {
		hs = append(hs, EquityPoint{Date: dateOf(h.Date), Equity: h.Equity, Flow: h.Flow})
	}
	// Today's equity is the account's, whatever the history's last bar;
	// today's flow is the bar's.
	today := EquityPoint{Date: dateOf(s.cfg.Now()), Equity: acct.Equity}
	hs = slices.DeleteFunc(hs, func(e EquityPoint) bool {
		if e.Date == today.Date {
			today.Flow = e.Flow
			return true
		}
		return false
	})
	hs = append(hs, today)
	var recorded uuid.UUID
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := lockUser(ctx, tx, c.UserID); err != nil {
			return err
		}
		st := NewStore(tx)
		b, err := st.book(ctx, c.ID, c.UserID, now)
		exists := err == nil
		if err != nil && !errors.Is(err, errNoLedger) {
			return err
		}
		if !exists || consistent && b.Version == version {
			d, err := st.reconcile(ctx, &c, b.Portfolio, exists, &pf, states, now)
			if err != nil {
				return err
			}
			if d != "" {
				s.cfg.Logger.Warn("the ledger differed from the broker; the broker's account is taken",
					"connection_id", c.ID, "differences", d)
			}
		} else {
			pf = b.Portfolio
		}
		if recorded, err = st.saveFills(ctx, &pf, fs); err != nil {
			return err
		}
		return st.saveHistory(ctx, pf.ID, hs)
	})
	if err != nil {
		return 0, err
	}
	if recorded != uuid.Nil && s.cfg.OnFill != nil {
		s.cfg.OnFill(recorded)
	}
	return len(pf.Positions), nil
}

// orderStates reads the orders from the broker: by their id there, or,
// for one whose acknowledgement was lost, by the client order id it was
// sent with. An order the broker does not hold is left out.
func orderStates(ctx context.Context, tr brokers.Trader, orders []Order) (map[uuid.UUID]brokers.OrderState, error) {
	out := make(map[uuid.UUID]brokers.OrderState, len(orders))
	for _, o := range orders {
		var st brokers.OrderState
		var err error
		if o.BrokerOrderID != nil {
			st, err = tr.Order(ctx, *o.BrokerOrderID)
		} else {
			st, err = tr.OrderByClientID(ctx, o.ID.String())
		}
		if errors.Is(err, tradekit.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[o.ID] = st
	}
	return out, nil
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

// randomToken returns 256 random bits as URL-safe text.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never returns an error (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken returns the hex SHA-256 of t, the form states are stored in.
func hashToken(t string) string {
	h := sha256.Sum256([]byte(t))
	return hex.EncodeToString(h[:])
}

// withQuery returns u with the name-value pairs added to its query.
func withQuery(u string, kv ...string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	p.RawQuery = q.Encode()
	return p.String()
}

// snapshot reads the account, its positions and, when open is not nil,
// the states of its open orders, as of one moment. The broker answers
// them in separate requests, so a fill between them would pair the cash
// from before it with the positions from after it, and the portfolio
// would hold shares nobody paid for until the next sync. The account and
// the open orders are read again after the positions, and the whole read
// again while the cash or an order's fills moved in between (at most
// three times; a busier account keeps the last read, with consistent
// false, which the next sync corrects).
func snapshot(ctx context.Context, b brokers.Broker, open func(context.Context) (map[uuid.UUID]brokers.OrderState, error)) (
	acct brokers.Account, positions []brokers.Position, states map[uuid.UUID]brokers.OrderState, consistent bool, err error) {
	if open == nil {
		open = func(context.Context) (map[uuid.UUID]brokers.OrderState, error) { return nil, nil }
	}
	if acct, err = b.Account(ctx); err != nil {
		return
	}
	if states, err = open(ctx); err != nil {
		return
	}
	for try := 1; ; try++ {
		if positions, err = b.Positions(ctx); err != nil {
			return
		}
		again, err := b.Account(ctx)
		if err != nil {
			return brokers.Account{}, nil, nil, false, err
		}
		later, err := open(ctx)
		if err != nil {
			return brokers.Account{}, nil, nil, false, err
		}
		consistent = again.Cash.Equal(acct.Cash) && sameFills(states, later)
		if consistent || try == 3 {
			return again, positions, later, consistent, nil
		}
		acct, states = again, later
	}
}

// sameFills reports whether the orders in a and b have the same fills.
func sameFills(a, b map[uuid.UUID]brokers.OrderState) bool {
	if len(a) != len(b) {
		return false
	}
	for id, x := range a {
		y, ok := b[id]
		if !ok || !x.FilledQuantity.Equal(y.FilledQuantity) || x.Status != y.Status {
			return false
		}
	}
	return true
}
